// llama.cpp (node-llama-cpp's prebuilt CPU binary) behind the external-engine protocol, end to end on tiny
// generated models exported to GGUF: the hello handshake, target-only and draft-model runs through the
// client (src/adapter/client.ts), tokens compared with the reference engine's target-only tokens tie-aware,
// the laws through checkExternalCase, unsupported cases refused, and exit when stdin closes. The two
// node-llama-cpp findings (docs/findings/) are pinned: when an upgrade fixes one, its test fails and the
// finding's document must be updated.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkExternalCase } from "../../../src/adapter/check-external.ts";
import { engineCommand } from "../../../src/cli/engine.ts";
import { ExternalEngine, ExternalEngineError, requestFor } from "../../../src/adapter/client.ts";
import { HelloResponseSchema, PROTOCOL, PROTOCOL_VERSION } from "../../../src/adapter/protocol.ts";
import type { Case } from "../../../src/case/case.ts";
import { defaultEngineConfig } from "../../../src/engine/config.ts";
import { loadModels, runCase } from "../../../src/engine/run-case.ts";
import { CAPABILITIES } from "../../../src/engines/llama-cpp/capabilities.ts";
import { writeCaseGguf } from "../../../src/engines/llama-cpp/model-files.ts";
import { targetOnlyCase } from "../../../src/laws/check-case.ts";
import { ReferenceOracle } from "../../../src/laws/oracle.ts";
import { defaultDraftSpec, type DraftKind } from "../../../src/model/spec.ts";
import { validateAgainst } from "../../../src/schema/validator.ts";
import { compareTokens } from "../../../src/trace/compare.ts";
import { capture } from "../../helpers/capture.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-llama-"));
const command = `node bin/specconf.js engine llama-cpp --models ${dir}`;
const TIMEOUT = { timeoutMs: 60_000 };

function llamaCase(kind: DraftKind | null, numSteps: number, prompts: number[][], maxNewTokens = 12): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: kind ? defaultDraftSpec(kind) : null,
    engine: defaultEngineConfig({ mode: kind ? "speculative" : "target-only", numSteps }),
    workload: {
      requests: prompts.map((prompt, id) => ({ id, prompt, maxNewTokens, arrivalStep: 0 })),
      aborts: [],
    },
  };
}

// The tiny preset's preamble, and a second prompt of another length: two sequences in one context.
const PROMPTS = [
  [1, 5, 9, 13, 17],
  [1, 5, 9, 13, 17, 40, 7, 3],
];
const targetOnly = llamaCase(null, 3, PROMPTS);
const mirror = llamaCase("mirror", 3, PROMPTS);
const truncated = llamaCase("truncated-mirror", 2, PROMPTS);
// Prompt lookup on prompts that hold part of the tiny model's greedy continuation, so drafts get proposed.
const ngram = llamaCase("ngram", 3, [
  [1, 5, 9, 13, 17, 37, 59, 23, 53, 43, 17],
  [1, 5, 9, 13, 17, 37],
]);
// Shrunk by fast-check through the engine (docs/findings/): S = 2 and S = 1 mirror drafts.
const underAccepted = llamaCase("mirror", 2, [PROMPTS[0]], 1);
const lostDraftToken = llamaCase("mirror", 1, [PROMPTS[0]], 6);

let engine: ExternalEngine;
beforeAll(() => {
  for (const testCase of [mirror, truncated, underAccepted, lostDraftToken]) writeCaseGguf(testCase, dir);
  engine = ExternalEngine.start(command);
});
afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

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
    const result = await engine.run(targetOnly, TIMEOUT);
    expect(result.outputs.map((output) => output.tokens.length)).toEqual([12, 12]);
    expect(await agreesWithReference(targetOnly, result.outputs)).toBeGreaterThan(12);
    expect(result.trace?.events).toEqual([]);
  });

  for (const testCase of [mirror, truncated, ngram]) {
    it(`${testCase.draft!.kind} drafts: lossless, reference decode, rounds observed`, async () => {
      const result = await engine.run(testCase, TIMEOUT);
      expect(await agreesWithReference(testCase, result.outputs)).toBeGreaterThan(12);
      for (const output of result.outputs) {
        // Every round emits accept_len tokens until the request's last, which may be cut.
        const lens = output.acceptLens!;
        expect(lens.length).toBeGreaterThan(0);
        expect(lens.slice(0, -1).reduce((sum, len) => sum + len, 0)).toBeLessThan(output.tokens.length);
        expect(lens.reduce((sum, len) => sum + len, 0)).toBeGreaterThanOrEqual(output.tokens.length);
        // A draft model is asked for exactly S drafts; prompt lookup proposes what it finds.
        if (testCase.draft!.kind !== "ngram") expect(output.firstRoundDrafts!.length).toBe(testCase.engine.numSteps);
      }
      if (testCase.draft!.kind === "ngram")
        expect(result.trace!.events.some((event) => event.rows.length > 1)).toBe(true);
      // The mirror's first drafts are the target's own greedy tokens (an exact copy drafting the prompt).
      if (testCase.draft!.kind === "mirror")
        for (const output of result.outputs) expect(output.firstRoundDrafts).toEqual(output.tokens.slice(0, 3));
      const check = await checkExternalCase(engine, testCase, TIMEOUT);
      const status = (law: string) => check.results.find((result) => result.law === law)?.status;
      expect(status("reference decode")).toBe("holds");
      expect(status("lossless")).toBe("holds");
    });
  }

  it("finding node-llama-cpp-one-draft-validated-per-round: under-acceptance at depth 2", async () => {
    const check = await checkExternalCase(engine, underAccepted, TIMEOUT);
    const law = check.results.find((result) => result.law === "acceptance correctness")!;
    expect(law.status).toBe("fails");
    expect(law.violation!.message).toMatch(/under-accepted at depth 2: accept_len 2/);
  });

  it("finding node-llama-cpp-draft-loses-accepted-tokens: an exact-copy draft proposes a wrong token", async () => {
    const check = await checkExternalCase(engine, lostDraftToken, TIMEOUT);
    const law = check.results.find((result) => result.law === "mirror acceptance")!;
    expect(law.status).toBe("fails");
    expect(check.results.find((result) => result.law === "acceptance correctness")!.status).toBe("holds");
  });

  it("refuses cases outside its capabilities, and stays usable", async () => {
    const chunked = { ...mirror, engine: { ...mirror.engine, chunkSize: 2 } };
    const float64 = { ...targetOnly, model: { preset: "tiny-f64" } };
    const eagle = { ...mirror, draft: defaultDraftSpec("eagle") };
    for (const testCase of [chunked, float64, eagle]) {
      const error = await engine.run(testCase, TIMEOUT).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ExternalEngineError);
      expect((error as ExternalEngineError).kind).toBe("unsupported");
    }
    expect((await engine.run(targetOnly, TIMEOUT)).outputs).toHaveLength(2);
  });
});

describe("llama.cpp engine over raw JSON Lines", () => {
  it("answers a hello first, then a request, and exits when stdin closes", async () => {
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "pipe", "pipe"] });
    const lines = createInterface({ input: child.stdout });
    const next = (async function* () {
      for await (const line of lines) yield JSON.parse(line) as Record<string, unknown>;
    })();
    const hello = {
      protocol: PROTOCOL,
      version: PROTOCOL_VERSION,
      hello: { specconf: "test", modelFormats: ["gguf"] },
    };
    child.stdin.write(`${JSON.stringify(hello)}\n`);
    const answer = (await next.next()).value;
    expect(validateAgainst(HelloResponseSchema, answer, "hello").ok).toBe(true);
    const info = (answer as { hello: { name: string; version: string; capabilities: unknown } }).hello;
    expect(info.name).toBe("llama.cpp");
    expect(info.version).toMatch(/^llama\.cpp \S+ \(node-llama-cpp 3\.22\.1, prebuilt cpu\)$/);
    expect(info.capabilities).toEqual(CAPABILITIES);
    child.stdin.write(`${JSON.stringify(requestFor(targetOnly, 7, false))}\n`);
    const response = (await next.next()).value as { requestId: number; outputs: unknown[]; trace?: unknown };
    expect(response.requestId).toBe(7);
    expect(response.outputs).toHaveLength(2);
    expect(response.trace).toBeUndefined();
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
