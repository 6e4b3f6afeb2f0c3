// Each fault, switched on, makes a law fail without crashing the engine; off, the same case passes.
import { describe, expect, it } from "vitest";
import type { AbortEvent, Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { FAULT_NAMES, type FaultName } from "../../src/case/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import { checkLaws } from "../../src/check/runner.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import type { DraftKind } from "../../src/model/spec.ts";
import type { EngineConfig } from "../../src/case/engine-config.ts";
import type { SamplingParams } from "../../src/sampling/params.ts";

/** Three states over tokens the default case's targets emit; no state accepts, so no request ends early. */
const FAULT_GRAMMAR = {
  states: 3,
  transitions: [
    [0, 52, 1],
    [0, 11, 2],
    [0, 46, 0],
    [0, 17, 1],
    [1, 11, 2],
    [1, 20, 0],
    [1, 7, 2],
    [1, 33, 0],
    [2, 46, 0],
    [2, 52, 1],
    [2, 22, 1],
    [2, 17, 2],
  ] as [number, number, number][],
  accepting: [],
};

/** Where each fault shows: the draft that exposes it and the laws expected to catch it. */
const EXPOSURE: Record<
  FaultName,
  {
    draft: DraftKind;
    laws: string[];
    engine?: Partial<EngineConfig>;
    retracts?: AbortEvent[];
    aborts?: AbortEvent[];
    /** Per request (the case's outputs: 52 11 46 52 11 46 53 1 7 52 33 39 / 40 20 11 17 17 17 7 22 52 43 35 16 / ...). */
    sampling?: SamplingParams[];
    arrivals?: number[];
    /** The model preset (default tiny). */
    preset?: string;
    /** Per request: draft steps per round (case draftSchedule). */
    schedules?: number[][];
    /** Only a twin law sees it: every law checks the case through the runner, twins included. */
    twins?: boolean;
  }
> = {
  "chunked-tail-token": { draft: "mirror", laws: ["draft reference", "rows carry request tokens"] },
  "draft-position-early-increment": { draft: "mirror", laws: ["positions", "draft reference"] },
  "phase-confusion": { draft: "eagle", laws: ["phase contracts", "draft reference"] },
  "leaked-rejected-slots": { draft: "noisy-mirror", laws: ["KV conservation"] },
  "cross-request-mask-leak": { draft: "mirror", laws: ["positions", "reference decode"] },
  // Invisible with topk 1 (N = S + 1): a tree with N > S + 1 makes the stride matter.
  "bonus-stride": { draft: "mirror", laws: ["bonus stride", "lossless"], engine: { topk: 2, numDraftTokens: 6 } },
  // Multi-layer only: step k's forward on module 0's pool.
  "shared-draft-pool": { draft: "mirror", laws: ["per-step pools", "draft reference"], engine: { multiLayer: true } },
  // Only graph replay captures: the capture's in-place position change leaks into the real forward.
  "positions-not-restored-after-capture": {
    draft: "mirror",
    laws: ["positions", "draft reference"],
    engine: { graphReplay: true },
  },
  // Trees only, with a frontier chosen from the previous step's children (S >= 3).
  "frontier-by-own-logprob": { draft: "mirror", laws: ["tree selection"], engine: { topk: 2, numDraftTokens: 4 } },
  // EAGLE-3: the mirror variant accepts everything, so a wrong map also collapses acceptance.
  "eagle3-aux-layer-off-by-one": { draft: "eagle3-mirror", laws: ["aux provenance", "draft reference"] },
  "eagle3-fc-skipped": { draft: "eagle3-mirror", laws: ["aux provenance", "draft reference"] },
  "eagle3-d2t-missing": {
    draft: "eagle3-mirror",
    laws: ["draft vocabulary", "mirror acceptance", "draft reference"],
  },
  // Needs a retract of a decoding request.
  "stale-draft-kv-after-retract": {
    draft: "mirror",
    laws: ["positions"],
    retracts: [
      { request: 0, step: 3, beforeForward: 0 },
      { request: 1, step: 4, beforeForward: 1 },
      { request: 2, step: 5, beforeForward: 2 },
    ],
  },
  // An abort and a retract of decoding requests, dropped without a trace: only the schedule shows them.
  "abort-dropped-while-decoding": {
    draft: "mirror",
    laws: ["abort finality"],
    aborts: [{ request: 1, step: 3, beforeForward: 1 }],
  },
  "retract-dropped-while-decoding": {
    draft: "mirror",
    laws: ["retract resumes"],
    retracts: [{ request: 1, step: 4, beforeForward: 1 }],
  },
  // Rounds accepting 2+ tokens (the mirror accepts all S) extend the draft over 2+ anchors: the first is skipped.
  "skipped-draft-position": { draft: "mirror", laws: ["positions", "draft reference"] },
  // A standalone draft (noisy mirror: mirror acceptance does not apply) with decode rows fed one position late.
  "draft-model-position-shifted": { draft: "noisy-mirror", laws: ["draft reference"] },
  // Overlap: retracts after a decode step's verify, while its results are in flight.
  "stale-placeholder-after-gap": {
    draft: "mirror",
    laws: ["placeholder resolution", "rows carry request tokens"],
    engine: { overlap: true },
    retracts: [
      { request: 0, step: 3, beforeForward: 3 },
      { request: 1, step: 4, beforeForward: 3 },
    ],
  },
  // The ring is created while one request prefills; later a decode and a final prefill chunk share a step.
  "future-ring-wrap": {
    draft: "mirror",
    laws: ["placeholder resolution", "phase contracts"],
    engine: { overlap: true },
    arrivals: [0, 6, 12],
  },
  // Later arrivals hit the first request's cached prefix (the preamble and beyond).
  "prefix-hit-uninitialized-draft-kv": {
    draft: "mirror",
    laws: ["prefix-cache draft KV", "draft reference"],
    engine: { prefixCache: true },
    arrivals: [0, 4, 8],
  },
  // Page 3: the preamble's second page is matched only partly, and the draft pool shares it anyway.
  "prefix-draft-kv-unaligned": {
    draft: "mirror",
    laws: ["KV conservation"],
    engine: { prefixCache: true, pageSize: 3, poolSlots: 3072 },
    arrivals: [0, 4, 8],
  },
  "padded-seq-lens-sum": {
    draft: "mirror",
    laws: ["reference decode", "lossless"],
    engine: { graphReplay: true, graphBuckets: [4, 8, 16] },
    arrivals: [0, 1, 2],
  },
  "stale-padding-slot": {
    draft: "mirror",
    laws: ["draft reference", "mirror acceptance"],
    engine: { graphReplay: true, graphBuckets: [4, 8, 16] },
    arrivals: [0, 1, 2],
  },
  // Prompt lookup proposes 0..S drafts: a request without one reads the accept buffer's stale row.
  "zero-draft-stale-row": { draft: "ngram", laws: ["bonus stride", "lossless"] },
  // Full-acceptance rounds emit output tokens 9..12 against a cap of 12: stops at 10 (33) and 9 (43) inside.
  "length-before-stop": {
    draft: "mirror",
    laws: ["termination equivalence", "processing parity"],
    sampling: [{ stopTokenIds: [33] }, { stopTokenIds: [43] }],
  },
  "penalties-per-step": {
    draft: "mirror",
    laws: ["termination equivalence", "processing parity"],
    sampling: [{ presencePenalty: 1 }, { frequencyPenalty: 1 }, { repetitionPenalty: 1.5 }],
  },
  "processing-bonus-only": {
    draft: "mirror",
    laws: ["termination equivalence", "processing parity", "acceptance correctness"],
    sampling: [{ logitBias: { "23": 5 } }, { presencePenalty: 1 }, { repetitionPenalty: 1.5 }],
  },
  "speculated-logprobs-zero": {
    draft: "mirror",
    laws: ["logprob parity"],
    sampling: [{ logprobs: 1 }, { logprobs: 0 }, { logprobs: 2 }],
  },
  // Rejection sampling at temperature 0.6 (the temperature must not be 1 for a second division to show).
  "temperature-applied-twice": {
    draft: "noisy-mirror",
    laws: ["sampling replay"],
    sampling: [
      { temperature: 0.6, seed: 1 },
      { temperature: 0.6, seed: 2 },
      { temperature: 0.6, seed: 3 },
    ],
  },
  // A rejection must happen: the noisy mirror rejects often enough at temperature 1.2.
  "recovery-from-target": {
    draft: "noisy-mirror",
    laws: ["sampling replay"],
    sampling: [
      { temperature: 1.2, seed: 1 },
      { temperature: 1.2, seed: 2 },
      { temperature: 1.2, seed: 3 },
    ],
  },
  // The stop ids first come at output token 6 (53, 7), where 6 tokens are committed but 3 steps ran.
  "min-tokens-per-step": {
    draft: "mirror",
    laws: ["termination equivalence", "processing parity"],
    sampling: [
      { minNewTokens: 6, stopTokenIds: [53] },
      { minNewTokens: 6, stopTokenIds: [7] },
    ],
  },
  // Sliding-window models: the draft's windowed layer attends everything in its extend rows.
  "window-missing-on-draft-extend": { draft: "mirror", laws: ["sliding window", "draft reference"], preset: "swa" },
  // A rejected round (the noisy mirror rejects often) leaves the next rows' window behind.
  "window-rollback-to-round-start": {
    draft: "noisy-mirror",
    laws: ["sliding window", "reference decode"],
    preset: "swa",
  },
  // The swa preset's YaRN scaling: a mirror built without it rejects, yet the output stays the target's.
  "draft-rope-unscaled": { draft: "mirror", laws: ["mirror acceptance", "draft reference"], preset: "swa" },
  // Grammars over the outputs' tokens; the EAGLE head's drafts are rejected often, and drafting them through the
  // automaton leaves it in another state than the emitted tokens do.
  // Speculation off for two rounds, then on: the catch-up extend must cover the positions verified while off.
  "draft-kv-not-caught-up": {
    draft: "mirror",
    laws: ["draft reference", "positions"],
    schedules: [
      [3, 0, 0, 3],
      [0, 2, 0, 1],
      [1, 0, 3],
    ],
  },
  // Prompts 16, 7 and 13 with 12 new tokens: request 0 reaches the target's context of 28 exactly, and the
  // requests pass the draft's context of 19 mid-request, where a round drafting its whole lookahead feeds past it.
  "lookahead-past-limit": {
    draft: "mirror",
    laws: ["context limit"],
    engine: { contextLength: 28, draftContextLength: 19 },
  },
  // One slot, taken in turn: request 1 (prompt 7) takes it after request 0 (prompt 16 + 12 tokens), and prompt
  // lookup drafts from request 0's tokens.
  "drafter-state-kept-on-slot-reuse": {
    draft: "ngram",
    laws: ["slot history"],
    engine: { requestSlots: 1 },
    twins: true,
  },
  // Stop strings spanning output tokens 1 and 2 of requests 0 and 1 (tiny's texts: xx|YYxYY|xcxxc|... and
  // Y|Ycxc|YYxYY|...): both end inside the first full-acceptance round, before its last token, so a check of the
  // round's tail misses them and the requests run on.
  "stop-string-checked-at-round-end": {
    draft: "mirror",
    laws: ["stop string end", "termination equivalence"],
    sampling: [{ stop: ["Yxc"] }, { stop: ["cYY"] }, { stop: [] }],
  },
  // Full-acceptance rounds emit 4 tokens a step: a delta of the last one loses the other three.
  "stream-delta-last-token": {
    draft: "mirror",
    laws: ["stream deltas"],
    sampling: [{ stop: [] }, { stop: ["cYY"] }, { stop: [] }],
  },
  // Request 0's stop string ends inside the first full-acceptance round: the round's other tokens are counted.
  "usage-counts-verified-run": {
    draft: "mirror",
    laws: ["usage counts"],
    sampling: [{ stop: ["Yxc"] }, { stop: [] }, { stop: [] }],
  },
  // Request 0's second token "YYxYY" (text "xxYYxYY") completes both: "xYY" ends first (at 4), "YYx" is listed first.
  "stop-strings-by-list-order": {
    draft: "mirror",
    laws: ["stop string end"],
    sampling: [{ stop: ["YYx", "xYY"] }, { stop: [] }, { stop: [] }],
  },
  // Request 1's text ends in "Y" ("Yq"'s start, held back) when the abort lands: its stream must release it.
  "held-text-dropped-on-abort": {
    draft: "mirror",
    laws: ["stream deltas"],
    sampling: [{ stop: [] }, { stop: ["Yq"] }, { stop: [] }],
    aborts: [{ request: 1, step: 3, beforeForward: 1 }],
  },
  "grammar-advanced-by-rejected-drafts": {
    draft: "eagle",
    laws: ["grammar state", "grammar acceptance"],
    sampling: [{ grammar: FAULT_GRAMMAR }, { grammar: FAULT_GRAMMAR }, { grammar: FAULT_GRAMMAR }],
  },
  // Rounds whose bonus sits at an even position verify the bonus alone: outputs, positions and the draft KV's
  // catch-up all stay right (an EAGLE head: mirror acceptance would see the short rounds of a mirror too).
  "draft-failure-plain-decode": { draft: "eagle", laws: ["speculation engaged"] },
  // Hybrid models: the noisy mirror rejects drafts (and whole rounds), so verify's per-position states must be
  // rolled back; the state kept shows in the next round's rows and, where it moves an argmax, in the tokens.
  "recurrent-state-wrong-slot": {
    draft: "noisy-mirror",
    laws: ["recurrent state", "lossless", "acceptance correctness"],
    preset: "hybrid",
  },
  "recurrent-rejected-drafts-kept": {
    draft: "noisy-mirror",
    laws: ["recurrent state", "lossless", "acceptance correctness"],
    preset: "hybrid",
  },
  "recurrent-zero-accepted-wraps": {
    draft: "noisy-mirror",
    laws: ["recurrent state", "lossless", "acceptance correctness"],
    preset: "hybrid",
  },
  // Later arrivals hit the first request's cached preamble, whose node holds the state after its whole sequence.
  "prefix-cache-latest-recurrent-state": {
    draft: "mirror",
    laws: ["recurrent state"],
    engine: { prefixCache: true },
    arrivals: [0, 4, 8],
    preset: "hybrid",
  },
};

function faultCase(
  draft: DraftKind,
  faults: FaultName[],
  engine: Partial<EngineConfig> = {},
  retracts: AbortEvent[] = [],
  sampling: SamplingParams[] = [],
  arrivals?: number[],
  preset = "tiny",
  aborts: AbortEvent[] = [],
  schedules: number[][] = [],
): Case {
  const base = defaultCase({
    preset,
    draft,
    seed: 5,
    numRequests: 3,
    maxNewTokens: 12,
    engine: { numSteps: 3, numDraftTokens: 4, chunkSize: 3, pageSize: 2, faults, ...engine },
  });
  // Arrive together so batches pack several requests (the mask leak needs a neighbour), unless told otherwise.
  return {
    ...base,
    workload: {
      ...base.workload,
      retracts,
      aborts,
      requests: base.workload.requests.map((request, i) => ({
        ...request,
        arrivalStep: arrivals?.[i] ?? 0,
        ...(sampling[i] ? { sampling: sampling[i] } : {}),
        ...(schedules[i] ? { draftSchedule: schedules[i] } : {}),
      })),
    },
  };
}

async function failingLaws(testCase: Case, twins = false): Promise<string[]> {
  if (twins) {
    const check = await checkLaws(referenceSource(), testCase);
    return check.results.filter((law) => law.status === "fails").map((law) => law.law);
  }
  const targetOnly = await runCase({
    ...testCase,
    engine: { ...testCase.engine, mode: "target-only", faults: [] },
    workload: { ...testCase.workload, retracts: [], aborts: [] },
  });
  const speculative = await runCase(testCase);
  const laws = await checkRun(testCase, speculative, targetOnly);
  return laws.filter((law) => law.status === "fails").map((law) => law.law);
}

describe("faults are caught by the laws", () => {
  it("covers every fault", () => {
    expect(Object.keys(EXPOSURE).sort()).toEqual([...FAULT_NAMES].sort());
  });
  for (const fault of FAULT_NAMES) {
    it(`${fault}: fails ${EXPOSURE[fault].laws.join(" and ")}; passes with the fault off`, async () => {
      const { draft, laws, engine, retracts, sampling, arrivals, preset, aborts, schedules, twins } = EXPOSURE[fault];
      const failing = await failingLaws(
        faultCase(draft, [fault], engine, retracts, sampling, arrivals, preset, aborts, schedules),
        twins,
      );
      for (const law of laws) expect(failing).toContain(law);
      expect(
        await failingLaws(faultCase(draft, [], engine, retracts, sampling, arrivals, preset, aborts, schedules), twins),
      ).toEqual([]);
    });
  }
});
