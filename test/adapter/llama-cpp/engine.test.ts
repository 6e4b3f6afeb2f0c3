// llama.cpp (node-llama-cpp's prebuilt CPU binary) behind the external-engine protocol, end to end on tiny
// generated models exported to GGUF: as a run source (src/sources/external.ts: hello, models from the
// content-addressed cache), target-only and draft-model runs whose tokens agree with the reference engine's
// target-only tokens tie-aware, the laws through the runner; over raw JSON Lines: a request before any hello,
// a hello later, files from --models DIR, unsupported cases refused, exit when stdin closes. The two
// node-llama-cpp findings (docs/findings/) are pinned: when an upgrade fixes one, its test fails and the
// finding's document must be updated.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineCommand } from "../../../src/cli/engine.ts";
import { requestFor } from "../../../src/adapter/client.ts";
import { HelloResponseSchema, PROTOCOL, PROTOCOL_VERSION } from "../../../src/adapter/protocol.ts";
import type { Case } from "../../../src/case/case.ts";
import { loadModels } from "../../../src/case/models.ts";
import { runCase } from "../../../src/engine/run-case.ts";
import { CAPABILITIES } from "../../../src/adapter/llama-cpp/capabilities.ts";
import { writeCaseGguf } from "../../../src/adapter/llama-cpp/model-files.ts";
import { checkMirrorAcceptanceFromOutputs } from "../../../src/laws/mirror-acceptance.ts";
import { checkLaws } from "../../../src/check/runner.ts";
import { ReferenceOracle } from "../../../src/reference/oracle.ts";
import { defaultDraftSpec } from "../../../src/model/spec.ts";
import { validateAgainst } from "../../../src/schema/validator.ts";
import { ExternalSource } from "../../../src/sources/external.ts";
import { ModelCache } from "../../../src/sources/model-cache.ts";
import { targetOnlyCase } from "../../../src/check/source.ts";
import { tinyCase, TWO_PROMPTS as PROMPTS } from "../../helpers/tiny-case.ts";
import { compareTokens } from "../../../src/trace/compare.ts";
import { capture } from "../../helpers/capture.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-llama-"));
const command = "node bin/specconf.js engine llama-cpp";

const targetOnly = tinyCase(null, 3, PROMPTS);
const mirror = tinyCase("mirror", 3, PROMPTS);
const truncated = tinyCase("truncated-mirror", 2, PROMPTS);
// Prompt lookup on prompts that hold part of the tiny model's greedy continuation, so drafts get proposed.
const ngram = tinyCase("ngram", 3, [
  [1, 5, 9, 13, 17, 37, 59, 23, 53, 43, 17],
  [1, 5, 9, 13, 17, 37],
]);
// Shrunk by fast-check through the engine (docs/findings/): S = 2 and S = 1 mirror drafts.
const underAccepted = tinyCase("mirror", 2, [PROMPTS[0]], 1);
const lostDraftToken = tinyCase("mirror", 1, [PROMPTS[0]], 6);

let engine: ExternalSource;
// Starting llama.cpp takes seconds (node-llama-cpp tests its prebuilt binary in a child process first).
beforeAll(async () => {
  engine = await ExternalSource.start(command, { timeoutMs: 60_000, modelCache: new ModelCache(join(dir, "cache")) });
}, 60_000);
afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function lawStatus(testCase: Case): Promise<(law: string) => string | undefined> {
  const check = await checkLaws(engine, testCase);
  expect(check.skipped).toBeUndefined();
  return (law) => check.results.find((result) => result.law === law)?.status;
}

/** The reference engine's target-only tokens vs the engine's, tie-aware (margins along the reference's own tokens). */
async function agreesWithReference(testCase: Case, got: { id: number; tokens: number[] }[]): Promise<number> {
  const reference = await runCase(targetOnlyCase(testCase), { trace: false });
  const oracle = await ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
  let compared = 0;
  for (const expected of reference.outputs) {
    const prompt = testCase.workload.requests.find((request) => request.id === expected.id)!.prompt;
    const forward = await oracle.targetOver([...prompt, ...expected.tokens]);
    const margins = expected.tokens.map((_, i) => forward.predictions[prompt.length - 1 + i].margin);
    const engineTokens = got.find((output) => output.id === expected.id)!.tokens;
    const comparison = compareTokens(expected.tokens, margins, engineTokens, oracle.epsilon);
    expect(comparison.status, `request ${expected.id}: ${JSON.stringify(comparison)}`).not.toBe("diverged");
    compared += comparison.compared;
  }
  return compared;
}

describe("llama.cpp engine (node-llama-cpp, CPU)", () => {
  it("target-only: the tokens of two batched sequences agree with the reference engine's", async () => {
    const result = await engine.run(targetOnly);
    expect(result.outputs.map((output) => output.tokens.length)).toEqual([12, 12]);
    expect(await agreesWithReference(targetOnly, result.outputs)).toBeGreaterThan(12);
    expect(result.trace?.events).toEqual([]);
  });

  for (const testCase of [mirror, truncated, ngram]) {
    it(`${testCase.draft!.kind} drafts: lossless, reference decode, rounds observed`, async () => {
      const result = await engine.run(testCase);
      expect(await agreesWithReference(testCase, result.outputs)).toBeGreaterThan(12);
      for (const output of result.outputs) {
        // Every round emits accept_len tokens until the request's last, which may be cut.
        const lens = output.acceptLens;
        expect(lens.length).toBeGreaterThan(0);
        expect(lens.slice(0, -1).reduce((sum, len) => sum + len, 0)).toBeLessThan(output.tokens.length);
        expect(lens.reduce((sum, len) => sum + len, 0)).toBeGreaterThanOrEqual(output.tokens.length);
        // The trace's first verify event of the request: its root, then the first round's drafts.
        const first = result.trace.events.find((event) => event.rows[0].request === output.id)!;
        const drafts = first.rows.slice(1).map((row) => row.token);
        expect(first.verify![0].acceptLen).toBe(lens[0]);
        // A draft model is asked for exactly S drafts; prompt lookup proposes what it finds.
        if (testCase.draft!.kind !== "ngram") expect(drafts).toHaveLength(testCase.engine.numSteps);
        // The mirror's first drafts are the target's own greedy tokens (an exact copy drafting the prompt).
        if (testCase.draft!.kind === "mirror") expect(drafts).toEqual(output.tokens.slice(0, 3));
      }
      if (testCase.draft!.kind === "ngram")
        expect(result.trace.events.some((event) => event.rows.length > 1)).toBe(true);
      const status = await lawStatus(testCase);
      expect(status("reference decode")).toBe("holds");
      expect(status("lossless")).toBe("holds");
    });
  }

  it("finding node-llama-cpp-one-draft-validated-per-round: under-acceptance at depth 2", async () => {
    const check = await checkLaws(engine, underAccepted);
    const law = check.results.find((result) => result.law === "acceptance correctness")!;
    expect(law.status).toBe("fails");
    expect(law.violation!.message).toMatch(/under-accepted at depth 2: accept_len 2/);
  });

  it("finding node-llama-cpp-draft-loses-accepted-tokens: an exact-copy draft proposes a wrong token", async () => {
    const status = await lawStatus(lostDraftToken);
    expect(status("mirror acceptance")).toBe("fails");
    expect(status("acceptance correctness")).toBe("holds");
    // From the outputs alone (rounds include the first token) the law fails at the same round.
    const result = await engine.run(lostDraftToken);
    const prompts = new Map(lostDraftToken.workload.requests.map((request) => [request.id, request.prompt]));
    const fromOutputs = await checkMirrorAcceptanceFromOutputs(
      result.outputs,
      prompts,
      1,
      await engine.oracle(lostDraftToken),
    );
    expect(fromOutputs.status).toBe("fails");
    expect(fromOutputs.violation!.message).toMatch(/^request 0, round 2: accept_len 1 < 2/);
  });
});

describe("llama.cpp engine over raw JSON Lines", () => {
  it("answers a request before any hello, a hello later, refuses what it did not declare, exits on EOF", async () => {
    writeCaseGguf(targetOnly, join(dir, "by-digest"));
    const child = spawn("/bin/sh", ["-c", `${command} --models ${join(dir, "by-digest")}`], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const lines = createInterface({ input: child.stdout });
    const next = (async function* () {
      for await (const line of lines) yield JSON.parse(line) as Record<string, unknown>;
    })();
    const send = async (value: unknown) => {
      child.stdin.write(`${JSON.stringify(value)}\n`);
      return (await next.next()).value as Record<string, unknown>;
    };
    // No files in the request: the engine reads --models DIR/<digest>.v<export version>.gguf.
    const response = await send(requestFor(targetOnly, 7, false));
    expect(response.requestId).toBe(7);
    expect((response.outputs as { tokens: number[] }[]).map((output) => output.tokens.length)).toEqual([12, 12]);
    expect(response.trace).toBeUndefined();
    const answer = await send({
      protocol: PROTOCOL,
      version: PROTOCOL_VERSION,
      hello: { specconf: "test", modelFormats: ["gguf"] },
    });
    expect(validateAgainst(HelloResponseSchema, answer, "hello").ok).toBe(true);
    const info = (answer as { hello: { name: string; version: string; capabilities: unknown } }).hello;
    expect(info.name).toBe("llama.cpp");
    expect(info.version).toMatch(/^\S+ \(node-llama-cpp 3\.22\.1, prebuilt cpu\)$/);
    expect(info.capabilities).toEqual(CAPABILITIES);
    const outside = [
      { ...mirror, engine: { ...mirror.engine, chunkSize: 2 } },
      { ...targetOnly, model: { preset: "tiny-f64" } },
      { ...mirror, draft: defaultDraftSpec("eagle") },
      { ...mirror, engine: { ...mirror.engine, topk: 2, numDraftTokens: 3 } },
      { ...targetOnly, workload: { ...targetOnly.workload, aborts: [{ request: 0, step: 1, beforeForward: 0 }] } },
    ];
    for (const [i, testCase] of outside.entries()) {
      const refused = await send(requestFor(testCase, 10 + i, true));
      expect(refused, JSON.stringify(refused)).toMatchObject({ requestId: 10 + i, unsupported: true });
      expect(refused.error).toMatch(/^\/(engine|model|draft|workload)\//);
    }
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});

describe("specconf engine: bad usage", () => {
  for (const [args, message] of [
    [[], "missing engine name"],
    [["vllm"], "unknown engine 'vllm'"],
    [["llama-cpp", "--write-missing"], "--write-missing needs --models DIR"],
    [["llama-cpp", "--threads", "0"], "--threads"],
  ] as const) {
    it(`${args.join(" ") || "(nothing)"}: exit 2, one line naming the problem`, async () => {
      const result = await capture(() => engineCommand([...args]));
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe("");
    });
  }
});
