// The text layer end to end on hand-built cases (issue 28, item 2): a stop string spelled across tokens of an
// accepted run ends the request at its token, with the text cut there (or kept with includeStopStrInOutput), the
// deltas adding up to it and usage counting the kept tokens; every law holds and the coverage corners are found.
// Each text law fails on an output corrupted the way its bug class corrupts it, and an output without the text
// fields leaves it not checkable.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { coverageLabels } from "../../src/check/coverage.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";
import { getPreset } from "../../src/model/presets.ts";
import { detokenize, pieceEnds, vocabularyOf } from "../../src/model/vocabulary.ts";
import type { SamplingParams } from "../../src/sampling/params.ts";
import type { RequestOutput } from "../../src/trace/run-result.ts";
import { checkStopStringEnd } from "../../src/laws/stop-string-end.ts";
import { checkStopTrim } from "../../src/laws/stop-trim.ts";
import { checkStreamDeltas } from "../../src/laws/stream-deltas.ts";
import { checkUsageCounts } from "../../src/laws/usage-counts.ts";
import { checkRun } from "../helpers/check-run.ts";

const SPEC = getPreset("tiny");
const VOCABULARY = vocabularyOf(SPEC);
const PROMPT = [1, 5, 9, 13, 17, 3];

function textCase(sampling: SamplingParams, numSteps = 4, maxNewTokens = 10): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec("mirror"),
    engine: defaultEngineConfig({ numSteps, numDraftTokens: numSteps + 1, poolSlots: 512 }),
    workload: {
      requests: [{ id: 0, prompt: PROMPT, maxNewTokens, arrivalStep: 0, sampling: { logprobs: 1, ...sampling } }],
      aborts: [],
    },
  };
}

async function lawsFailing(testCase: Case): Promise<string[]> {
  const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
  const laws = await checkRun(testCase, await runCase(testCase), targetOnly);
  return laws.filter((law) => law.status === "fails").map((law) => `${law.law}: ${law.violation?.message}`);
}

/** The plain output, and a stop string of 2 characters across its output tokens 2 and 3 (inside the first round). */
async function spanningStop(): Promise<{ tokens: number[]; stop: string; start: number }> {
  const plain = await runCase(textCase({ stop: [] }));
  const tokens = plain.outputs[0].tokens;
  const text = detokenize(VOCABULARY, tokens);
  const ends = pieceEnds(VOCABULARY, tokens);
  const stop = text.slice(ends[1] - 1, ends[1] + 1);
  return { tokens, stop, start: text.indexOf(stop) };
}

describe("the text layer", () => {
  it("a stop string across tokens of an accepted run ends the request at its token; every law holds", async () => {
    const { tokens, stop, start } = await spanningStop();
    const ends = pieceEnds(VOCABULARY, tokens);
    const stopToken = ends.findIndex((end) => end >= start + stop.length);
    for (const include of [false, true]) {
      const built = textCase({ stop: [stop], ...(include ? { includeStopStrInOutput: true } : {}) });
      const run = await runCase(built);
      const output = run.outputs[0];
      expect(output.tokens).toEqual(tokens.slice(0, stopToken + 1));
      expect(output.logprobs).toHaveLength(stopToken + 1);
      expect(output.finishReason).toBe("stop");
      expect(output.stopString).toBe(stop);
      const full = detokenize(VOCABULARY, tokens);
      expect(output.text).toBe(full.slice(0, include ? start + stop.length : start));
      expect(output.deltas!.map((delta) => delta.text).join("")).toBe(output.text);
      expect(output.usage).toEqual({ promptTokens: PROMPT.length, completionTokens: stopToken + 1 });
      expect(await lawsFailing(built)).toEqual([]);
      if (stopToken >= 1) expect(coverageLabels(built, run.trace)).toContain("delta of several tokens");
    }
  });

  it("finds the coverage corners where built", async () => {
    const { stop } = await spanningStop();
    const built = textCase({ stop: [stop] });
    const labels = coverageLabels(built, (await runCase(built)).trace);
    expect(labels).toContain("stop string inside an accepted run");
    expect(labels).toContain("stop string across tokens");
    // Without text, none of them.
    const plain = textCase({});
    expect(coverageLabels(plain, (await runCase(plain)).trace).filter((label) => label.startsWith("stop"))).toEqual([]);
  });

  it("finds two stop strings one token completes, and an abort while text is held back (issue 34)", async () => {
    const { tokens } = await spanningStop();
    const text = detokenize(VOCABULARY, tokens);
    const ends = pieceEnds(VOCABULARY, tokens);
    // A token whose whole piece and that piece less its first character first occur in it: it completes both.
    const t = tokens.findIndex((_, i) => {
      const start = i > 0 ? ends[i - 1] : 0;
      const piece = text.slice(start, ends[i]);
      return piece.length >= 2 && text.indexOf(piece) === start && text.indexOf(piece.slice(1)) >= start;
    });
    expect(t).toBeGreaterThanOrEqual(0);
    const piece = text.slice(t > 0 ? ends[t - 1] : 0, ends[t]);
    const two = textCase({ stop: [piece, piece.slice(1)] });
    const twoRun = await runCase(two);
    expect(twoRun.outputs[0].tokens).toHaveLength(t + 1);
    expect(coverageLabels(two, twoRun.trace)).toContain("two stop strings completed by one token");
    expect(await lawsFailing(two)).toEqual([]);
    expect(coverageLabels(two, twoRun.trace)).not.toContain("abort while text is held back");
    // Every character followed by one no token spells: the text always ends in a held-back stop string start.
    const chars = [...new Set(text)].map((char) => `${char}\u0001`);
    const held: Case = { ...textCase({ stop: chars }), workload: { ...textCase({ stop: chars }).workload } };
    held.workload.aborts = [{ request: 0, step: 2, beforeForward: 0 }];
    const heldRun = await runCase(held);
    expect(heldRun.outputs[0].finishReason).toBe("abort");
    expect(coverageLabels(held, heldRun.trace)).toContain("abort while text is held back");
    expect(await lawsFailing(held)).toEqual([]);
  });

  it("each text law fails on the output its bug class produces", async () => {
    const { stop } = await spanningStop();
    const built = textCase({ stop: [stop] });
    const run = await runCase(built);
    const output = run.outputs[0];
    const plain = (await runCase(textCase({ stop: [] }))).outputs[0];
    const judge = (corrupt: Partial<RequestOutput>) => {
      const outputs = [{ ...output, ...corrupt }];
      return {
        end: checkStopStringEnd(built, outputs, SPEC).status,
        trim: checkStopTrim(built, outputs, SPEC).status,
        deltas: checkStreamDeltas(built, outputs).status,
        usage: checkUsageCounts(built, outputs).status,
      };
    };
    expect(judge({})).toEqual({ end: "holds", trim: "holds", deltas: "holds", usage: "holds" });
    // sglang#23802: the stop missed, the request ran on (its text uncut).
    const ranOn = { tokens: plain.tokens, text: plain.text, finishReason: "length" as const, stopString: undefined };
    expect(judge(ranOn).end).toBe("fails");
    // vllm#47616: the text trimmed, the tokens and logprobs not.
    expect(judge({ tokens: plain.tokens, logprobs: plain.logprobs }).trim).toBe("fails");
    expect(judge({ logprobs: plain.logprobs }).trim).toBe("fails");
    // vllm#26027: a step's delta kept only its last token.
    const deltas = output.deltas!.map((delta) => ({
      text: VOCABULARY.pieces[delta.tokens.at(-1) ?? 0] ?? "",
      tokens: delta.tokens.slice(-1),
    }));
    expect(judge({ deltas }).deltas).toBe("fails");
    // sglang#39826: the run's verified tokens counted.
    expect(judge({ usage: { promptTokens: PROMPT.length, completionTokens: plain.tokens.length } }).usage).toBe(
      "fails",
    );
    // A wrong stop string reported, a wrong finish reason.
    expect(judge({ stopString: `${stop}!` }).end).toBe("fails");
    expect(judge({ finishReason: "length" }).end).toBe("fails");
    // No text fields: not checkable, never invented.
    expect(judge({ text: undefined, deltas: undefined, usage: undefined, stopString: undefined })).toEqual({
      end: "not-checkable",
      trim: "not-checkable",
      deltas: "not-checkable",
      usage: "not-checkable",
    });
  });
});
