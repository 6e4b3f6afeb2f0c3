// llama-server behind the external-engine protocol, end to end on tiny generated models: every draft kind it
// declares runs through the protocol with the laws applied (tokens tie-aware against the reference target,
// mirror rounds accepting every draft, logged rounds consistent with the server's own totals); a case outside
// the capabilities is refused with its JSON path; a server that dies is started afresh for the next case; a
// case over its budget has its server's process group killed.
import { beforeAll, describe, expect, it } from "vitest";
import type { Case } from "../../../src/case/case.ts";
import { buildBinary } from "../../../src/adapter/llama-server/binary.ts";
import { serverArgs, serverKey } from "../../../src/adapter/llama-server/launch.ts";
import { respond, ServerPool, type ServerServeOptions } from "../../../src/adapter/llama-server/serve.ts";
import { requestFor } from "../../../src/adapter/client.ts";
import { checkLaws } from "../../../src/check/runner.ts";
import type { DraftKind } from "../../../src/model/spec.ts";
import { ExternalSource } from "../../../src/sources/external.ts";
import { ModelCache } from "../../../src/sources/model-cache.ts";
import { tinyCase, TWO_PROMPTS as PROMPTS } from "../../helpers/tiny-case.ts";
import { loadPins } from "../../../src/failures/pins.ts";
import { getPreset } from "../../../src/model/presets.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../../../src/model/vocabulary.ts";
import { finalText, firstStopOccurrence } from "../../../src/sampling/stop-strings.ts";
import { engineStopChoice } from "../../../src/profiles/stop-choice.ts";
import { PROFILES, RelaxationLog } from "../../../src/profiles/profiles.ts";
import { RelaxedViews } from "../../../src/profiles/relaxed-view.ts";

const COMMAND = "node bin/specconf.js engine llama-server";
const PINNED = loadPins("docs/findings/llama-server.pins.json").laws;
let binary = "";

beforeAll(async () => {
  binary = await buildBinary({ log: (text) => process.stderr.write(text) });
}, 1_800_000);

describe("llama-server through the protocol", () => {
  it("every declared draft kind: the laws hold; mirror rounds accept every draft", { timeout: 240_000 }, async () => {
    const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
    try {
      const kinds: (DraftKind | null)[] = [null, "mirror", "truncated-mirror", "noisy-mirror", "eagle3", "ngram"];
      for (const kind of kinds) {
        const check = await checkLaws(source, tinyCase(kind, 3, PROMPTS));
        expect(check.skipped, `${kind}`).toBeUndefined();
        // Pinned laws fail by the findings they name (docs/findings/llama-server.pins.json): not judged here.
        const failing = check.results.filter((result) => result.status === "fails" && !PINNED.has(result.law));
        expect(failing.map((result) => `${kind}: ${result.law}: ${JSON.stringify(result)}`)).toEqual([]);
        const held = new Set(check.results.filter((result) => result.status === "holds").map((result) => result.law));
        expect(held.has("reference decode") || kind !== null, `${kind}`).toBe(true);
        if (kind) expect(held.has("lossless"), `${kind}`).toBe(true);
        if (kind === "mirror") {
          expect(held.has("mirror acceptance")).toBe(true);
          const run = await source.run(tinyCase(kind, 3, PROMPTS));
          // Rounds happened and every one accepted all 3 drafts (the exact copy of the target proposes its tokens).
          expect(run.outputs.every((output) => (output.acceptLens ?? []).length > 0)).toBe(true);
          expect(run.outputs.flatMap((output) => output.acceptLens ?? []).every((len) => len === 4)).toBe(true);
        }
      }
    } finally {
      await source.close();
    }
  });

  it(
    "a later arrival and an abort: the laws hold; the aborted request stops early, the others as if sent at once",
    {
      timeout: 180_000,
    },
    async () => {
      const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
      try {
        for (const kind of ["mirror", "ngram", null] as const) {
          const together = tinyCase(kind, 3, [...PROMPTS, [1, 7, 7, 7, 2]], 48);
          const staggered = structuredClone(together);
          staggered.workload.requests[1].arrivalStep = 3;
          staggered.workload.requests[2].arrivalStep = 6;
          staggered.workload.aborts = [{ request: 0, step: 2, beforeForward: 0 }];
          const check = await checkLaws(source, staggered);
          expect(check.skipped, `${kind}`).toBeUndefined();
          const failing = check.results.filter((result) => result.status === "fails" && !PINNED.has(result.law));
          expect(failing.map((result) => `${kind}: ${result.law}: ${JSON.stringify(result)}`)).toEqual([]);
          const [plain, cut] = [await source.run(together), await source.run(staggered)];
          // Cut after 2 of the server's steps: the first tokens came, far from all 48 (the server cancelled it).
          expect(cut.outputs[0].finishReason, `${kind}`).toBe("abort");
          expect(cut.outputs[0].tokens.length).toBeGreaterThan(0);
          expect(cut.outputs[0].tokens.length).toBeLessThan(plain.outputs[0].tokens.length);
          expect(cut.outputs[0].tokens).toEqual(plain.outputs[0].tokens.slice(0, cut.outputs[0].tokens.length));
          // Greedy outputs do not depend on when a request arrives.
          expect(cut.outputs.slice(1).map((output) => output.tokens)).toEqual(
            plain.outputs.slice(1).map((output) => output.tokens),
          );
          if (kind === "mirror")
            expect(cut.outputs.flatMap((output) => output.acceptLens ?? []).every((len) => len === 4)).toBe(true);
        }
      } finally {
        await source.close();
      }
    },
  );

  it("the repetition penalty: processing parity holds; the outputs change", { timeout: 120_000 }, async () => {
    const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
    try {
      for (const kind of ["mirror", null] as const) {
        const plain = tinyCase(kind, 3, PROMPTS, 24);
        const penalized = structuredClone(plain);
        for (const request of penalized.workload.requests) request.sampling = { repetitionPenalty: 3 };
        const check = await checkLaws(source, penalized);
        const byLaw = new Map(check.results.map((result) => [result.law, result.status]));
        if (kind) expect(byLaw.get("processing parity"), `${kind}`).toBe("holds"); // speculative runs only
        const failing = check.results.filter((result) => result.status === "fails" && !PINNED.has(result.law));
        expect(failing.map((result) => `${kind}: ${result.law}: ${JSON.stringify(result)}`)).toEqual([]);
        const [before, after] = [await source.run(plain), await source.run(penalized)];
        expect(after.outputs.map((output) => output.tokens)).not.toEqual(before.outputs.map((output) => output.tokens));
      }
    } finally {
      await source.close();
    }
  });

  it(
    "a token grammar: its laws hold; outputs follow it and end at its end state without the server's forced EOS",
    { timeout: 120_000 },
    async () => {
      const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
      try {
        for (const kind of ["mirror", "ngram", null] as const) {
          const plain = tinyCase(kind, 3, PROMPTS);
          const free = (await source.run(plain)).outputs[0].tokens;
          // Two choices, then two more, then an end state: the model's preferences decide among tokens it did
          // not emit first unconstrained (the mask matters), and the grammar ends the request after two tokens.
          const { eosId, bosId } = getPreset("tiny");
          const pool = [...new Set([...free, 3, 4, 5, 6, 7])].filter((token) => token !== eosId && token !== bosId);
          const [a, b, c, d] = pool.filter((token) => token !== free[0]);
          const grammar = {
            states: 3,
            transitions: [
              [0, a, 1],
              [0, b, 1],
              [1, c, 2],
              [1, d, 2],
            ] as [number, number, number][],
            accepting: [2],
          };
          const constrained = structuredClone(plain);
          constrained.workload.requests[0].sampling = { grammar };
          const check = await checkLaws(source, constrained);
          const byLaw = new Map(check.results.map((result) => [result.law, result.status]));
          expect(byLaw.get("grammar acceptance"), `${kind}`).toBe("holds");
          expect(byLaw.get("reference decode"), `${kind}`).toBe("holds");
          const failing = check.results.filter((result) => result.status === "fails" && !PINNED.has(result.law));
          expect(failing.map((result) => `${kind}: ${result.law}: ${JSON.stringify(result)}`)).toEqual([]);
          const run = await source.run(constrained);
          const [output] = run.outputs;
          expect(output.finishReason, `${kind}`).toBe("stop");
          expect(output.tokens.length).toBe(2);
          expect([a, b]).toContain(output.tokens[0]);
          expect([c, d]).toContain(output.tokens[1]);
          // The other request has no grammar: as before.
          expect(run.outputs[1].tokens).toEqual((await source.run(plain)).outputs[1].tokens);
        }
      } finally {
        await source.close();
      }
    },
  );

  it(
    "context limits and request slots: each slot holds the case's context; requests take one slot in turn",
    { timeout: 120_000 },
    async () => {
      const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
      try {
        for (const kind of ["mirror", null] as const) {
          // Prompt + output fill the context exactly (the server would stop at its slot's context first were it
          // smaller; a server whose slots hold another context is refused: serve.ts).
          const atLimit = tinyCase(kind, 3, PROMPTS);
          atLimit.engine.contextLength = PROMPTS[1].length + 4;
          atLimit.workload.requests.forEach((request) => {
            request.maxNewTokens = atLimit.engine.contextLength! - request.prompt.length;
          });
          const limited = await checkLaws(source, atLimit);
          const byLaw = new Map(limited.results.map((result) => [result.law, result.status]));
          // Within a round's lookahead of the limit: law "context limit" applies to speculative runs.
          if (kind) expect(byLaw.get("context limit"), `${kind}`).toBe("holds");
          expect(byLaw.get("reference decode"), `${kind}`).toBe("holds");
          const run = await source.run(atLimit);
          expect(
            run.outputs.map((output) => output.tokens.length + atLimit.workload.requests[output.id].prompt.length),
          ).toEqual([atLimit.engine.contextLength, atLimit.engine.contextLength]);
          // Three requests on one slot, the second arriving later: each waits for the slot and runs on it.
          const shared = tinyCase(kind, 3, [...PROMPTS, [1, 7, 7, 7, 2]]);
          shared.engine.requestSlots = 1;
          shared.workload.requests[1].arrivalStep = 2;
          const check = await checkLaws(source, shared);
          const failing = check.results.filter((result) => result.status === "fails" && !PINNED.has(result.law));
          expect(failing.map((result) => `${kind}: ${result.law}: ${JSON.stringify(result)}`)).toEqual([]);
          if (kind) expect(check.results.find((result) => result.law === "slot history")?.status).toBe("holds");
          const inTurn = await source.run(shared);
          expect(inTurn.trace.requests?.map((request) => request.slot)).toEqual([0, 0, 0]);
        }
      } finally {
        await source.close();
      }
    },
  );

  it(
    "stop strings: the text is the vocabulary's; a stop string across tokens ends the request where it occurs",
    { timeout: 120_000 },
    async () => {
      const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
      const vocabulary = vocabularyOf(getPreset("tiny"));
      try {
        for (const kind of ["mirror", null] as const) {
          const plain = tinyCase(kind, 3, PROMPTS);
          plain.workload.requests[0].sampling = { stop: [] };
          const free = (await source.run(plain)).outputs[0];
          // The server's text is the exported vocabulary's (src/export/gguf.ts), streamed as deltas.
          expect(free.text, `${kind}`).toBe(detokenize(vocabulary, free.tokens));
          expect(free.deltas?.map((delta) => delta.text).join("")).toBe(free.text);
          expect(free.usage).toEqual({ promptTokens: PROMPTS[0].length, completionTokens: free.tokens.length });
          // A stop string from the last character of output token 2 through token 4: it spans tokens and
          // starts inside one; the request ends where its first occurrence does (stop-strings.ts).
          const text = free.text!;
          const ends = pieceEnds(vocabulary, free.tokens);
          const stop = text.slice(ends[2] - 1, ends[4]);
          const occurrence = firstStopOccurrence(text, ends, { stops: [stop], minNewTokens: 0 })!;
          const stopped = structuredClone(plain);
          stopped.workload.requests[0].sampling = { stop: [stop] };
          const check = await checkLaws(source, stopped);
          const failing = check.results.filter((result) => result.status === "fails" && !PINNED.has(result.law));
          expect(failing.map((result) => `${kind}: ${result.law}: ${JSON.stringify(result)}`)).toEqual([]);
          const [output] = (await source.run(stopped)).outputs;
          expect(output.finishReason, `${kind}`).toBe("stop");
          expect(output.stopString).toBe(stop);
          expect(output.tokens).toEqual(free.tokens.slice(0, occurrence.tokenIndex + 1));
          expect(output.text).toBe(finalText(text, occurrence, false));
          expect(output.usage?.completionTokens).toBe(output.tokens.length);
        }
      } finally {
        await source.close();
      }
    },
  );

  it(
    "stop-string choice: strict fails the server's earliest-start pick, its declared profile reads it exactly",
    { timeout: 120_000 },
    async () => {
      // One token completes two stop strings (handwritten, docs/design.md "Which stop"): "Yx" ends first, ";xYxx"
      // starts first; the server reports the one that starts first (server_slot::find_stopping_strings).
      const testCase = tinyCase(null, 1, [[1, 5, 9, 13, 17]]);
      testCase.workload.requests[0].sampling = { stop: [";xYxx", "Yx"] };
      const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
      try {
        const [output] = (await source.run(testCase)).outputs;
        const vocabulary = vocabularyOf(getPreset("tiny"));
        const text = detokenize(vocabulary, output.tokens);
        const ends = pieceEnds(vocabulary, output.tokens);
        const stops = [";xYxx", "Yx"];
        const reference = firstStopOccurrence(text, ends, { stops, minNewTokens: 0 })!;
        const windows = output.tokens.map((_, index) => index);
        const engine = engineStopChoice(text, ends, stops, 0, windows, "earliest-start")!;
        expect(engine.stop).not.toBe(reference.stop); // the case shows the two rules apart
        expect(output.text).toBe(finalText(text, engine, false));
        expect(output.stopString).toBe(engine.stop);
        const strict = await checkLaws(source, testCase);
        expect(strict.results.find((result) => result.law === "stop string end")?.status).toBe("fails");
        const log = new RelaxationLog(PROFILES["llama-server"]);
        const relaxed = await checkLaws(source, testCase, { views: new RelaxedViews(PROFILES["llama-server"], log) });
        for (const law of ["stop string end", "stop trim"])
          expect(relaxed.results.find((result) => result.law === law)?.status, law).toBe("holds");
        // Counted per outputs read: the run's, and its target-only baseline's (each translated from its own tokens).
        expect(log.entries()[0].applied).toBe(relaxed.baseline ? 2 : 1);
      } finally {
        await source.close();
      }
    },
  );

  it("refuses a case outside its capabilities with the JSON path", { timeout: 60_000 }, async () => {
    const pool = new ServerPool(options(60_000));
    const chunked = tinyCase("mirror", 2, PROMPTS);
    chunked.engine.chunkSize = 2;
    const response = await respond(pool, request(chunked), options(60_000), "test");
    expect(response).toMatchObject({ unsupported: true, error: expect.stringContaining("/engine/chunkSize") });
    pool.close();
  });

  it("a dead server is started afresh; a case over its budget kills its server", { timeout: 120_000 }, async () => {
    const testCase = tinyCase("mirror", 2, PROMPTS);
    const pool = new ServerPool(options(60_000));
    const first = await respond(pool, request(testCase), options(60_000), "test");
    expect("outputs" in first).toBe(true);
    const files = new ModelCache().files(testCase, ["gguf"]).gguf!; // the paths the requests name
    const server = await pool.get(serverKey(testCase, files), serverArgs(testCase, files));
    server.kill(); // a crash, as far as the pool can tell
    await expect(server.waitForLine(0, () => false, 10_000)).rejects.toThrow(/exited/);
    const second = await respond(pool, request(testCase), options(60_000), "test");
    expect(second).toEqual({ ...first, requestId: second.requestId });
    // Budget 1 ms: the case fails, and its server (the whole process group) is gone.
    const running = await pool.get(serverKey(testCase, files), serverArgs(testCase, files));
    const late = await respond(pool, request(testCase), options(1), "test");
    expect(late).toMatchObject({ error: expect.stringMatching(/abort|timeout/i) });
    await expect(running.waitForLine(0, () => false, 10_000)).rejects.toThrow(/exited/);
    pool.close();
  });
});

function options(caseTimeoutMs: number): ServerServeOptions {
  return { binary, caseTimeoutMs, log: () => undefined };
}

function request(testCase: Case): unknown {
  return requestFor(testCase, 1, true, new ModelCache().files(testCase, ["gguf"]));
}
