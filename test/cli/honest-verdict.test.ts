// Issue 34 items 5 and 6: a check's verdict is no larger than what its laws judged. Through the README's toy
// engine (a real CLI process), every law lands in exactly one group, computed here from the per-law rows and
// compared with the summary, the last line and the JUnit file (a law that judged nothing is <skipped> with
// why, never a pass); --require-laws fails a check that did not judge the laws it names, and its bad values
// are exit 2 naming the flag. An invariance failure through an external engine whose twin run is the wrong
// one says so (the twin comes through the protocol): test/fixtures/twin-fault-engine.mjs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAW_NAMES } from "../../src/laws/registry.ts";
import { render } from "../../src/report/reporters.ts";
import type { CheckSummary, LawSummary } from "../../src/report/summary.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-verdict-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The README's command, as printed there (its quoted verdict is compared with what this run prints).
const seed = "1";
const env = { ...process.env, PYTHONDONTWRITEBYTECODE: "1" };

function specconf(args: string[]) {
  return spawnSync("node", ["bin/specconf.js", ...args], { encoding: "utf8", env, timeout: 280_000 });
}

/** The group a law's row puts it in, from its counts alone. */
function groupOf(row: LawSummary | undefined): "held" | "failed" | "never checkable" | "no applicable case" {
  if (row && row.failed > 0) return "failed";
  if (row && row.passed > 0) return "held";
  return row && row.runs > 0 ? "never checkable" : "no applicable case";
}

/** The <testcase> element of `law` in a JUnit file. */
function testCaseOf(xml: string, law: string): string {
  const escaped = law.replace(/[/]/g, "\\/");
  const match = new RegExp(`<testcase classname="specconf.laws" name="${escaped}"[^>]*>.*?</testcase>`).exec(xml);
  expect(match, law).not.toBeNull();
  return match![0];
}

describe("the README's toy engine: a verdict that counts what held", () => {
  const junit = join(dir, "toy.xml");
  // chunk invariance cannot apply (the toy engine declares no chunked prefill): the requirement is unmet.
  const required = "reference decode,chunk invariance";
  let result: ReturnType<typeof specconf>;
  let summary: CheckSummary;
  // One check process for every test below (the toy engine is pure Python: seconds per case).
  beforeAll(() => {
    result = specconf([
      ...["check", "--engine", "python3 examples/toy_engine.py", "--runs", "2", "--seed", seed, "--workers", "1"],
      ...["--json", "--no-write", "--junit", junit, "--require-laws", required],
    ]);
    summary = JSON.parse(result.stdout) as CheckSummary;
  }, 300_000);

  it("every law is in one group, as its row's counts say; the last line counts them", () => {
    expect(result.status, result.stderr).toBe(1);
    const rows = new Map(summary.laws.map((row) => [row.name, row]));
    const expected = (group: ReturnType<typeof groupOf>) => LAW_NAMES.filter((law) => groupOf(rows.get(law)) === group);
    const { judged } = summary;
    expect(judged.total).toBe(LAW_NAMES.length);
    expect(judged.held).toEqual(expected("held"));
    expect(judged.failed).toEqual(expected("failed"));
    expect(judged.neverCheckable.map((entry) => entry.law)).toEqual(expected("never checkable"));
    expect(judged.noCase.map((entry) => entry.law)).toEqual(expected("no applicable case"));
    // The toy engine is correct, and most laws cannot judge it: both sides of the claim are exercised.
    expect(judged.failed).toEqual([]);
    expect(judged.held.length).toBeGreaterThan(0);
    expect(judged.neverCheckable.length + judged.noCase.length).toBeGreaterThan(0);
    // Each law that judged nothing says why, in the words of what was missing.
    for (const entry of judged.neverCheckable) {
      expect(entry.kind).toBe("not checkable");
      expect(entry.reason.length, entry.law).toBeGreaterThan(0);
      expect(entry.runs).toBe(rows.get(entry.law)!.notCheckable);
    }
    for (const entry of judged.noCase)
      expect(entry.reason).toMatch(/^the engine lacks |^it applies to none of the \d+ generated/);
    expect(judged.noCase.find((entry) => entry.law === "chunk invariance")).toMatchObject({
      kind: "capability missing",
      reason: "the engine lacks chunked prefill",
    });

    const text = render({ command: "check", summary }, "text");
    const lines = text.trimEnd().split("\n");
    const counts =
      `${judged.held.length} of ${LAW_NAMES.length} laws held on at least one case, ` +
      `${judged.neverCheckable.length} never checkable, ${judged.noCase.length} with no applicable case`;
    expect(lines.at(-1)).toBe(`seed ${seed}: FAILED (--require-laws not met): ${counts}`);
    expect(lines.at(-1)).not.toMatch(/holds/);
    for (const entry of [...judged.neverCheckable, ...judged.noCase])
      expect(text).toMatch(new RegExp(`^  .*\\b${entry.law.replace(/[/]/g, "\\/")}\\b.* \\(`, "m"));
    // Without --require-laws the same summary passes, and says no more than what held.
    const unrequired = { ...summary, required: undefined, ok: true };
    const verdict = render({ command: "check", summary: unrequired }, "text").trimEnd().split("\n").at(-1);
    expect(verdict).toBe(`seed ${seed}: no law failed: ${counts}`);
    // The README and docs/adapter.md quote that line as this command prints it.
    for (const doc of ["README.md", "docs/adapter.md"]) {
      const text = readFileSync(doc, "utf8").replace(/\s+/g, " ");
      const quoted = /check ends `(seed 1: [^`]*)`|whose last line is `(seed 1: [^`]*)`/.exec(text);
      expect(text, doc).toContain('npx specconf check --engine "python3 examples/toy_engine.py" --runs 2 --seed 1');
      expect(quoted?.[1] ?? quoted?.[2], doc).toBe(verdict);
    }
  });

  it("--require-laws: one line naming the law that judged nothing, and why", () => {
    expect(summary.ok).toBe(false);
    const unmet = summary.required?.unmet ?? "";
    expect(unmet).toMatch(/^--require-laws: 1 of the 2 required laws judged no case: 'chunk invariance' \(/);
    expect(unmet).not.toContain("reference decode");
    expect(unmet).not.toContain("\n");
    expect(render({ command: "check", summary }, "text")).toContain(`\n${unmet}\n`);
  });

  it("JUnit: a law that judged nothing is skipped with why; the counts are the file's own", () => {
    const xml = readFileSync(junit, "utf8");
    const notJudged = [...summary.judged.neverCheckable, ...summary.judged.noCase];
    expect(xml.match(/<testcase /g)).toHaveLength(summary.laws.length);
    expect(xml.match(/<skipped /g)).toHaveLength(notJudged.length);
    for (const entry of notJudged)
      expect(testCaseOf(xml, entry.law)).toContain(`<skipped message="${entry.kind}: ${entry.reason}"/>`);
    for (const law of summary.judged.held) expect(testCaseOf(xml, law)).not.toMatch(/<skipped|<failure/);
    const attributes = `tests="${summary.laws.length}" failures="0" errors="0" skipped="${notJudged.length}"`;
    expect(xml).toContain(`<testsuites name="specconf check" ${attributes}`);
    expect(xml).toContain(`<testsuite name="laws (seed ${seed})" ${attributes}`);
  });
});

describe("--require-laws", () => {
  it("holds when the laws named or counted judged a case, on the reference engine", { timeout: 120_000 }, () => {
    for (const value of ["1", "positions"]) {
      const run = specconf([
        "check",
        "--law",
        "positions",
        "--runs",
        "2",
        "--seed",
        "1",
        "--no-write",
        "--require-laws",
        value,
      ]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/seed 1: no law failed: 1 of 1 laws held on at least one case/);
    }
  });

  it("a shard leaves it to the merge, which enforces it over the shards' runs", { timeout: 200_000 }, () => {
    // Only positions' property runs: usage counts (the text layer) gets no case it applies to.
    const flags = ["--property", "positions", "--runs", "2", "--seed", "3", "--no-write"];
    const reports = ["1/2", "2/2"].map((shard, i) => {
      const run = specconf(["check", ...flags, "--require-laws", "positions,usage counts", "--shard", shard, "--json"]);
      expect(run.status, run.stderr).toBe(0);
      const file = join(dir, `shard-${i + 1}.json`);
      writeFileSync(file, run.stdout);
      return file;
    });
    const merged = specconf(["merge", ...reports]);
    expect(merged.status, merged.stderr).toBe(1);
    expect(merged.stdout).toContain(
      "--require-laws: 1 of the 2 required laws judged no case: 'usage counts' (no case drawn: it applies to none of the 2 generated cases)",
    );
    expect(merged.stdout.trimEnd().split("\n").at(-1)).toMatch(/^seed 3: FAILED \(--require-laws not met\): /);
  });

  it("bad values are exit 2 with one line naming the flag", { timeout: 120_000 }, () => {
    const cases: [string[], RegExp][] = [
      [["--require-laws", "0"], /--require-laws must be a count from 1 to the \d+ laws selected/],
      [["--require-laws", "9999"], /--require-laws must be a count from 1/],
      [["--require-laws", "positions,,lossless"], /--require-laws must be a count or law names/],
      [["--require-laws", "no such law"], /--require-laws: unknown law 'no such law'/],
      [["--law", "positions", "--require-laws", "lossless"], /--require-laws: 'lossless' is not among the laws --law/],
      [["--engine", "node x.mjs", "--golden", "--require-laws", "1"], /--require-laws/],
    ];
    for (const [args, message] of cases) {
      const run = specconf(["check", ...args]);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(run.stderr).toMatch(message);
    }
  });
});

describe("an invariance failure through an external engine names the run that diverged", () => {
  // The fixture plants draft decode one position early in unchunked runs ("twin") or in chunked ones ("case").
  for (const [where, named] of [
    [
      "twin",
      /chunk invariance: the unchunked run diverged from the reference \(draft reference[^\n]*\); the case's run agrees with it/,
    ],
    [
      "case",
      /chunk invariance: the case's run diverged from the reference \(draft reference[^\n]*\); the unchunked run agrees with it/,
    ],
  ] as const)
    it(
      `the wrong run is the ${where === "twin" ? "twin" : "case's own"}: check's text and JUnit say so`,
      { timeout: 200_000 },
      () => {
        const failures = join(dir, `failures-${where}`);
        const junit = join(dir, `invariance-${where}.xml`);
        const run = specconf([
          ...["check", "--engine", `node test/fixtures/twin-fault-engine.mjs ${where}`, "--law", "chunk invariance"],
          ...["--runs", "10", "--seed", "1", "--workers", "1", "--failures", failures, "--junit", junit],
        ]);
        expect(run.status, run.stderr).toBe(1);
        expect(run.stdout).toMatch(/chunk invariance FAILED: /);
        expect(run.stdout).toMatch(named);
        expect(readFileSync(junit, "utf8")).toMatch(named);
      },
    );
});
