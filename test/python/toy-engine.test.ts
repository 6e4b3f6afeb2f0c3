// Issue 27's "done when": an engine written with the Python package passes `check --engine`, exactly as the
// README's quick start runs it (a real CLI process, generated cases, models exported per case). The toy engine
// (examples/toy_engine.py) is a pure-Python Llama behind python/specconf_adapter; its runs are slow, so one
// run per law's property. The controls: the same engine with SGLang PR 25015's bug planted (draft decode one
// position late, test/fixtures/toy_engine_early_position.py) fails the laws that read its trace; with a bonus
// read from the wrong verify row (test/fixtures/toy_engine_bonus_row.py) it fails bonus stride through
// `check --engine`, since TraceBuilder records the engine's own bonus (issue 34, part 6).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "specconf-toy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const seed = process.env.SPECCONF_SEED ?? "3";
// The checkout's package source first, so an installed specconf-adapter (pip install ./python) never shadows it.
const env = { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONPATH: resolve("python") };

function specconf(args: string[]) {
  return spawnSync("node", ["bin/specconf.js", ...args], { encoding: "utf8", env, timeout: 280_000 });
}

interface LawRow {
  name: string;
  runs: number;
  passed: number;
  failed: number;
}

/** A case the toy engine runs: two requests, S = 3, the mirror as its standalone draft. */
const toyCase = {
  formatVersion: 1,
  model: { preset: "tiny" },
  draft: { kind: "mirror", noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed: 1 },
  engine: {
    mode: "speculative",
    numSteps: 3,
    topk: 1,
    numDraftTokens: 4,
    chunkSize: null,
    pageSize: 1,
    tokenBudget: 256,
    poolSlots: 4096,
    faults: [],
    runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
  },
  workload: {
    requests: [
      { id: 0, prompt: [1, 5, 9, 13, 17, 40, 41], maxNewTokens: 8, arrivalStep: 0 },
      { id: 1, prompt: [1, 5, 9, 13, 17, 22], maxNewTokens: 5, arrivalStep: 0 },
    ],
    aborts: [],
  },
};

describe("a Python engine on python/specconf_adapter under check --engine", () => {
  it("the toy engine passes: every law that checked something holds", { timeout: 300_000 }, () => {
    const result = specconf([
      ...["check", "--engine", "python3 examples/toy_engine.py", "--runs", "1", "--seed", seed],
      ...["--json", "--no-write"],
    ]);
    const replay = `SPECCONF_SEED=${seed} npx vitest run test/python/toy-engine.test.ts`;
    expect(result.status, `${result.stderr}\nreplay: ${replay}`).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; laws: LawRow[] };
    expect(report.ok).toBe(true);
    const passed = new Map(report.laws.map((law) => [law.name, law.passed]));
    // The laws its outputs and trace let specconf check: tokens, acceptance, the draft side through the
    // package's trace conventions (anchors, provenance, verify results).
    const traceLaws = ["reference decode", "lossless", "acceptance correctness", "draft reference"];
    // Tree selection: its chains recorded as trees of width 1 (candidates, scored children) through TraceBuilder.
    const conventionLaws = ["rows carry request tokens", "phase contracts", "tree selection"];
    for (const law of [...traceLaws, ...conventionLaws]) expect(passed.get(law), law).toBeGreaterThan(0);
    expect(report.laws.every((law) => law.failed === 0)).toBe(true);
  });

  // One property's runs (reference decode: the toy engine's chains), every law checking them; few runs.
  const bonusCheck = (engine: string) =>
    specconf([
      ...["check", "--engine", engine, "--property", "reference decode", "--runs", "2", "--seed", seed],
      ...["--json", "--no-write", "--shrink-seconds", "20"],
    ]);
  const bonusStride = (stdout: string) =>
    (JSON.parse(stdout) as { laws: LawRow[] }).laws.find((law) => law.name === "bonus stride")!;

  it("a bonus read from the wrong row fails bonus stride; the clean engine does not", { timeout: 240_000 }, () => {
    const buggy = bonusCheck("python3 test/fixtures/toy_engine_bonus_row.py");
    expect(buggy.status, buggy.stderr).toBe(1);
    expect(buggy.stderr).toMatch(/bonus stride FAILED/);
    expect(bonusStride(buggy.stdout).failed).toBeGreaterThan(0);
    const clean = bonusCheck("python3 examples/toy_engine.py");
    expect(clean.status, clean.stderr).toBe(0);
    const law = bonusStride(clean.stdout);
    expect(law.runs, "bonus stride judged the clean engine's runs").toBeGreaterThan(0);
    expect(law.failed).toBe(0);
  });

  it(
    "the same engine with draft decode one position late fails phase contracts and draft reference",
    { timeout: 120_000 },
    () => {
      const caseFile = join(dir, "toy.case.json");
      writeFileSync(caseFile, JSON.stringify(toyCase));
      const result = specconf([
        "replay",
        caseFile,
        "--engine",
        "python3 test/fixtures/toy_engine_early_position.py",
        "--json",
      ]);
      expect(result.status, result.stderr).toBe(1);
      const report = JSON.parse(result.stdout) as { laws: { law: string; status: string }[] };
      const status = new Map(report.laws.map((law) => [law.law, law.status]));
      expect(status.get("phase contracts")).toBe("fails");
      expect(status.get("draft reference")).toBe("fails");
      expect(status.get("reference decode")).toBe("holds");
    },
  );
});
