// `specconf run` end to end, in process: the --json summary, the trace file, and one-line errors with exit 2.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCommand } from "../../src/cli/run.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { validateTrace } from "../../src/trace/load.ts";

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const code = await runCommand(argv);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

afterEach(() => vi.restoreAllMocks());

describe("specconf run", () => {
  it("--json prints one object with the promised fields", async () => {
    const { code, stdout } = await run(["--draft", "mirror", "--steps", "2", "--chunk", "3", "--page", "4", "--json"]);
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({
      fullAcceptRate: 1,
      lossless: true,
      acceptanceCorrect: true,
      draftReference: true,
      ties: 0,
    });
    expect(summary.meanAcceptLen).toBeGreaterThan(2.5);
    expect(summary.acceptLenHistogram).toHaveLength(4);
    expect(summary.outputs).toHaveLength(4);
  });

  it("--trace writes a schema-valid trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "specconf-run-"));
    const file = join(dir, "trace.json");
    const { code, stdout } = await run(["--draft", "eagle", "--trace", file]);
    expect(code).toBe(0);
    expect(stdout).toContain("draft reference");
    expect(validateTrace(JSON.parse(readFileSync(file, "utf8")))).toEqual([]);
  });

  it("a fault makes the run fail with exit 1", async () => {
    const { code, stdout } = await run([
      "--draft",
      "mirror",
      "--chunk",
      "2",
      "--fault",
      "chunked-tail-token",
      "--json",
    ]);
    expect(code).toBe(1);
    expect(JSON.parse(stdout).draftReference).toBe(false);
  });

  const usageErrors: [string[], RegExp][] = [
    [["--steps", "0"], /--steps 0 is out of range: must be an integer >= 1/],
    [["--chunk", "0"], /--chunk 0 is out of range: must be an integer >= 1 or 'none'/],
    [["--chunk", "-3"], /--chunk -3 is out of range: must be an integer >= 1 or 'none'/],
    [["--page", "0"], /--page 0 is out of range: must be an integer >= 1/],
    [["--frobnicate"], /unknown flag --frobnicate/],
    [["--case", "/nonexistent/case.json"], /case\.json/],
  ];
  for (const [argv, message] of usageErrors) {
    it(`${argv.join(" ")}: one-line error, exit 2`, async () => {
      const { code, stderr, stdout } = await run(argv);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(message);
      expect(stderr.trim().split("\n")).toHaveLength(1);
    });
  }

  it("a case whose prompt does not start with BOS is refused for a mirror draft, naming the JSON path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "specconf-run-"));
    const file = join(dir, "case.json");
    const testCase = defaultCase({
      preset: "tiny",
      draft: "mirror",
      seed: 1,
      numRequests: 1,
      maxNewTokens: 4,
      engine: {},
    });
    testCase.workload.requests[0].prompt[0] = 7;
    writeFileSync(file, JSON.stringify(testCase));
    const traceFile = join(dir, "trace.json");
    const { code, stderr } = await run(["--case", file, "--trace", traceFile]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /case\.json: \/workload\/requests\/0\/prompt\/0: mirror drafts need prompts starting with BOS/,
    );
    expect(existsSync(traceFile)).toBe(false);
  });

  it("--ep webgpu refuses a float64 model with the reason", async () => {
    const { code, stderr } = await run(["--ep", "webgpu", "--preset", "tiny-f64"]);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(
      "specconf run: the WebGPU EP has no float64 kernels: use a float32 model spec with --ep webgpu",
    );
  });

  it("--ep cuda either runs the laws or names the fix for the missing provider", async () => {
    const { code, stdout, stderr } = await run(["--ep", "cuda", "--json"]);
    if (code === 2) {
      // CI and machines without the CUDA provider (npm never runs onnxruntime-node's download: package.json).
      expect(stderr).toMatch(
        /specconf run: cannot create an ONNX Runtime session on EP 'cuda': the CUDA EP libraries are missing: run `npm run gpu:cuda12`/,
      );
      expect(stderr.trim().split("\n")).toHaveLength(1);
    } else {
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ lossless: true, acceptanceCorrect: true, draftReference: true });
    }
  });

  it("malformed JSON in a case file: exit 2 with the file named", async () => {
    const dir = mkdtempSync(join(tmpdir(), "specconf-run-"));
    const file = join(dir, "broken.json");
    writeFileSync(file, '{"formatVersion": 1, ');
    const { code, stderr } = await run(["--case", file]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/broken\.json: invalid JSON/);
  });
});
