// `specconf check`, `specconf replay` and `specconf mutants` end to end, in process: JSON shapes, exit
// codes, failure files that replay from the file alone with the offending event marked, JUnit output.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkCommand } from "../../src/cli/check.ts";
import { mutantsCommand } from "../../src/cli/mutants.ts";
import { replayCommand } from "../../src/cli/replay.ts";
import { validateCase } from "../../src/case/load.ts";
import { validateFailureRecord } from "../../src/failures/failure-file.ts";
import { validateTrace } from "../../src/trace/load.ts";

async function capture(
  command: (argv: string[]) => Promise<number>,
  argv: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await command(argv);
    return { code, stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

afterEach(() => vi.restoreAllMocks());

describe("specconf check", () => {
  it("--json: every selected law holds on fixed seeds, exit 0, the seed printed", { timeout: 120_000 }, async () => {
    const { code, stdout, stderr } = await capture(checkCommand, [
      "--law",
      "positions",
      "--law",
      "chunk-invariance",
      "--runs",
      "4",
      "--seed",
      "5",
      "--json",
      "--no-write",
    ]);
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ ok: true, seed: 5 });
    expect(summary.laws.map((law: { name: string }) => law.name)).toEqual(["positions", "chunk invariance"]);
    for (const law of summary.laws)
      expect(law).toMatchObject({
        failed: 0,
        runs: expect.any(Number),
        passed: expect.any(Number),
        ties: expect.any(Number),
        seconds: expect.any(Number),
      });
    expect(stderr).toContain("seed 5");
  });

  it(
    "--property runs one law's suite with every law checking its runs; not with --law",
    { timeout: 120_000 },
    async () => {
      const { code, stdout } = await capture(checkCommand, [
        "--property",
        "positions",
        "--runs",
        "2",
        "--seed",
        "5",
        "--json",
        "--no-write",
      ]);
      expect(code).toBe(0);
      const laws: { name: string; runs: number }[] = JSON.parse(stdout).laws;
      // The positions suite's 2 runs, each checked by every law that applies (the table lists every law).
      expect(laws.find((law) => law.name === "positions")!.runs).toBe(2);
      expect(laws.find((law) => law.name === "lossless")!.runs).toBe(2);
      expect(laws.length).toBeGreaterThan(20);
      const combined = await capture(checkCommand, ["--property", "positions", "--law", "lossless", "--runs", "1"]);
      expect(combined.code).toBe(2);
      expect(combined.stderr).toMatch(/--law cannot be combined with --property/);
    },
  );

  it(
    "a fault fails a law: exit 1, the replay command in --json, a schema-valid failure record, case and trace",
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "specconf-check-"));
      const junit = join(dir, "report.xml");
      const { code, stdout } = await capture(checkCommand, [
        "--law",
        "positions",
        "--fault",
        "cross-request-mask-leak",
        "--runs",
        "20",
        "--seed",
        "1",
        "--json",
        "--failures",
        dir,
        "--junit",
        junit,
      ]);
      expect(code).toBe(1);
      const summary = JSON.parse(stdout);
      const positions = summary.laws.find((law: { name: string }) => law.name === "positions");
      expect(summary.ok).toBe(false);
      expect(positions.failed).toBeGreaterThan(0);
      // Named by law, property, faults and seed: two faults, laws, properties or seeds never share a file.
      expect(positions.replay).toMatch(
        /^npx specconf replay .*positions\.positions\.cross-request-mask-leak\.seed1\.json$/,
      );
      const file = join(dir, "positions.positions.cross-request-mask-leak.seed1.json");
      const record = JSON.parse(readFileSync(file, "utf8"));
      expect(validateFailureRecord(record)).toEqual([]);
      expect(validateCase(JSON.parse(readFileSync(join(dir, record.caseFile), "utf8")))).toEqual([]);
      expect(validateTrace(JSON.parse(readFileSync(join(dir, record.traceFile), "utf8")))).toEqual([]);
      expect(record.case.workload.requests.length).toBeLessThanOrEqual(2);
      expect(readFileSync(junit, "utf8")).toMatch(
        /<testcase classname="specconf.laws" name="positions"[^>]*><failure message="/,
      );

      // The replay reruns from the file alone, marks the first offending event, and reproduces.
      const replay = await capture(replayCommand, [file]);
      expect(replay.code).toBe(1);
      expect(replay.stdout).toMatch(/^>> +\d+/m);
      expect(replay.stdout).toContain("^ positions:");
      expect(replay.stdout).toContain(`reproduced exactly: positions: ${positions.violation}`);
      expect(replay.stdout).toContain("identical to the recorded one");
      const json = JSON.parse((await capture(replayCommand, [file, "--json"])).stdout);
      expect(json).toMatchObject({ reproduced: true, exact: true, identicalTrace: true });
    },
  );

  it("bad input exits 2 with one line", async () => {
    for (const [argv, pattern] of [
      [["--law", "nonsense"], /--law: unknown law 'nonsense'/],
      [["--runs", "0"], /--runs 0 is out of range: must be an integer >= 1/],
      [["--fault", "nope"], /--fault must be one of/],
    ] as const) {
      const { code, stderr } = await capture(checkCommand, [...argv]);
      expect(code).toBe(2);
      expect(stderr).toMatch(pattern);
      expect(stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});

describe("specconf replay", () => {
  it("a passing case file replays with exit 0; a missing or invalid file exits 2", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "specconf-replay-"));
    const file = join(dir, "case.json");
    writeFileSync(
      file,
      JSON.stringify({
        formatVersion: 1,
        model: { preset: "tiny" },
        draft: { kind: "mirror", noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed: 1 },
        engine: {
          mode: "speculative",
          numSteps: 2,
          topk: 1,
          numDraftTokens: 3,
          chunkSize: 2,
          pageSize: 1,
          tokenBudget: 256,
          poolSlots: 256,
          faults: [],
          runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
        },
        workload: {
          requests: [{ id: 0, prompt: [1, 5, 9, 13, 17, 3, 4], maxNewTokens: 4, arrivalStep: 0 }],
          aborts: [],
        },
      }),
    );
    const ok = await capture(replayCommand, [file]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/no law fails: [1-9]\d* laws hold/);
    expect(ok.stdout).toMatch(/prefill +target +r0: 1@0\/s\d+ 5@1/);
    expect((await capture(replayCommand, [join(dir, "missing.json")])).stderr).toMatch(/file not found/);
    writeFileSync(file, JSON.stringify({ formatVersion: 1, model: { preset: "tiny" } }));
    const bad = await capture(replayCommand, [file]);
    expect(bad.code).toBe(2);
    expect((await capture(replayCommand, [])).code).toBe(2);
  });

  it(
    "--ep reruns the file's case on that EP; a case the EP cannot run, or --ep with --engine, exits 2",
    {
      timeout: 60_000,
    },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "specconf-replay-ep-"));
      const file = join(dir, "case.json");
      const testCase = (preset: string, ep: string) => ({
        formatVersion: 1,
        model: { preset },
        draft: { kind: "mirror", noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed: 1 },
        engine: {
          mode: "speculative",
          numSteps: 2,
          topk: 1,
          numDraftTokens: 3,
          chunkSize: null,
          pageSize: 1,
          tokenBudget: 256,
          poolSlots: 256,
          faults: [],
          runtime: { ep, threads: 1, graphOptimizationLevel: "basic" },
        },
        workload: { requests: [{ id: 0, prompt: [1, 5, 9, 13, 17], maxNewTokens: 3, arrivalStep: 0 }], aborts: [] },
      });
      // A case found on CUDA, replayed on the CPU.
      writeFileSync(file, JSON.stringify(testCase("tiny", "cuda")));
      const cpu = await capture(replayCommand, [file, "--ep", "cpu"]);
      expect(cpu.code).toBe(0);
      expect(cpu.stdout).toContain("on EP cpu (the file's case runs on cuda)");
      expect(cpu.stdout).toMatch(/no law fails: [1-9]\d* laws hold/);
      // WebGPU has no float64 kernels (or, here, no Vulkan loader): bad input either way, never a law failure.
      writeFileSync(file, JSON.stringify(testCase("tiny-f64", "cpu")));
      const webgpu = await capture(replayCommand, [file, "--ep", "webgpu"]);
      expect(webgpu.code).toBe(2);
      expect(webgpu.stderr).toMatch(/WebGPU/);
      const combined = await capture(replayCommand, [file, "--ep", "cpu", "--engine", "node engine.mjs"]);
      expect(combined.code).toBe(2);
      expect(combined.stderr).toMatch(/--ep cannot be combined with --engine/);
    },
  );
});

describe("specconf mutants", () => {
  it("--json: a fault is killed and shrunk small", { timeout: 120_000 }, async () => {
    const { code, stdout } = await capture(mutantsCommand, [
      "--fault",
      "leaked-rejected-slots",
      "--max-runs",
      "60",
      "--json",
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.ok).toBe(true);
    expect(report.faults).toHaveLength(1);
    expect(report.faults[0]).toMatchObject({ name: "leaked-rejected-slots", killed: true, law: "KV conservation" });
    expect(report.faults[0].requests).toBeLessThanOrEqual(2);
    expect(report.faults[0].promptTokens).toBeLessThanOrEqual(12);
    expect(existsSync(report.faults[0].replay.replace("npx specconf replay ", ""))).toBe(true);
  });
});
