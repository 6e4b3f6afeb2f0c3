// Coverage labels read from a case and its trace, and the counter's 2% rule.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { COVERAGE_LABELS, CoverageCounter, coverageLabels, unobservableLabels } from "../../src/check/coverage.ts";
import { minimumPoolSlots } from "../../src/case/limits.ts";
import { readRounds } from "../../src/laws/rounds.ts";
import { SAMPLING_COVERAGE_LABELS, type SamplingCoverageLabel } from "../../src/check/sampling-coverage.ts";
import { STOCHASTIC_COVERAGE_LABELS } from "../../src/check/stochastic-coverage.ts";
import { GRAMMAR_COVERAGE_LABELS } from "../../src/check/grammar-coverage.ts";
import { SCHEDULE_COVERAGE_LABELS } from "../../src/check/schedule-coverage.ts";
import { CONTEXT_COVERAGE_LABELS } from "../../src/check/context-coverage.ts";
import { TEXT_COVERAGE_LABELS } from "../../src/check/text-coverage.ts";
import { CASE_COVERAGE_LABELS, caseCoverageLabels } from "../../src/check/case-coverage.ts";
import { SLOT_COVERAGE_LABELS } from "../../src/check/slot-coverage.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";
import type { SamplingParams } from "../../src/sampling/params.ts";

function testCase(
  engine: Partial<Case["engine"]>,
  requests: [number[], number, number][],
  extra: Partial<Case["workload"]> = {},
  draft: "noisy-mirror" | "mirror" = "noisy-mirror",
): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(draft),
    engine: defaultEngineConfig({ poolSlots: 512, ...engine }),
    workload: {
      requests: requests.map(([prompt, maxNewTokens, arrivalStep], id) => ({ id, prompt, maxNewTokens, arrivalStep })),
      aborts: [],
      ...extra,
    },
  };
}

describe("coverage labels", () => {
  it("finds each engine corner in runs built to hit them (no sampling options: no request-semantics or stochastic label)", async () => {
    const prompt = [1, 5, 9, 13, 17, 3, 4, 8];
    const all = testCase(
      { numSteps: 3, topk: 2, numDraftTokens: 6, chunkSize: 6, pageSize: 4 },
      [
        [prompt, 5, 0],
        [prompt.slice(0, 7), 7, 0],
        [prompt, 9, 0],
      ],
      { aborts: [{ request: 2, step: 3, beforeForward: 1 }], retracts: [{ request: 1, step: 2, beforeForward: 0 }] },
    );
    const classic = coverageLabels(all, (await runCase(all)).trace);
    // Scheduling: overlap, a prefix cache on page 3 with a pool of one request's reservation, padded buckets;
    // the second request shares 10 tokens (a hit at a page boundary), the third 7 (mid-page); a retract lands
    // after a verify, while its results are in flight.
    const shared = [1, 5, 9, 13, 17, 3, 4, 8, 21, 22, 23];
    const scheduled = testCase(
      { numSteps: 2, numDraftTokens: 3, pageSize: 3, overlap: true, prefixCache: true },
      [
        [shared, 8, 0],
        [[...shared.slice(0, 10), 30, 31], 8, 2],
        [[...shared.slice(0, 7), 40, 41, 42, 43, 44], 8, 4],
      ],
      { retracts: [{ request: 1, step: 5, beforeForward: 2 }] },
      "mirror",
    );
    scheduled.engine.poolSlots = minimumPoolSlots(scheduled);
    const padded = { ...scheduled, engine: { ...scheduled.engine, graphReplay: true, graphBuckets: [4, 8, 16] } };
    // Prompt lookup: the first request's bonus has occurred before (one draft, S = 1), the second's has not.
    const lookup = testCase({ numSteps: 1, numDraftTokens: 2 }, [
      [[1, 5, 9, 13, 17, 3], 4, 0],
      [[1, 5, 9, 13, 17, 4], 4, 0],
    ]);
    lookup.draft = defaultDraftSpec("ngram");
    const scheduling = coverageLabels(scheduled, (await runCase(scheduled)).trace);
    const paddedLabels = coverageLabels(padded, (await runCase(padded)).trace);
    const ragged = coverageLabels(lookup, (await runCase(lookup)).trace);
    expect(scheduling).toEqual(
      expect.arrayContaining([
        "finish with a future token in flight",
        "abort or retract with a future token in flight",
        "prefix hit mid-page",
        "prefix hit at a page boundary",
        "eviction while a prefix is shared",
      ]),
    );
    expect(scheduling).not.toContain("padded bucket with a padding row");
    expect(paddedLabels).toContain("padded bucket with a padding row");
    expect(ragged).toContain("empty-draft round next to a full one");
    expect(classic).not.toContain("empty-draft round next to a full one");
    const engineLabels = COVERAGE_LABELS.filter(
      (label) =>
        !(SAMPLING_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(STOCHASTIC_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(GRAMMAR_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(SCHEDULE_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(CONTEXT_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(SLOT_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(TEXT_COVERAGE_LABELS as readonly string[]).includes(label) &&
        !(CASE_COVERAGE_LABELS as readonly string[]).includes(label),
    );
    expect([...new Set([...classic, ...scheduling, ...paddedLabels, ...ragged])].sort()).toEqual(
      [...engineLabels].sort(),
    );
  });

  it("finds the case dimensions' labels from the case alone: the context gathered on the CPU EP, EAGLE-3 aux layers", () => {
    const plain = testCase({ numSteps: 1, numDraftTokens: 2 }, [[[1, 5, 9, 13, 17, 3], 4, 0]]);
    expect(caseCoverageLabels(plain)).toEqual([]);
    const gathered = {
      ...plain,
      engine: { ...plain.engine, runtime: { ...plain.engine.runtime, gatherContext: true } },
    };
    expect(caseCoverageLabels(gathered)).toEqual(["context gathered on the CPU EP"]);
    const eagle3 = { ...plain, draft: { ...defaultDraftSpec("eagle3"), auxLayers: [1, 0] } };
    expect(caseCoverageLabels(eagle3)).toEqual(["EAGLE-3 checkpoint's own aux layers"]);
    expect(caseCoverageLabels({ ...eagle3, draft: defaultDraftSpec("eagle3") })).toEqual([]);
  });

  it("finds the context-boundary corners in a run driven to its contexts, and not in the same run without them", async () => {
    // S = 3 with the mirror: rounds at L = 6 (room 3), L = 10 (the draft's context of 12 leaves 2), then past the
    // draft's context without speculation until prompt + output reaches the context of 16.
    const built = testCase({ numSteps: 3 }, [[[1, 5, 9, 13, 17, 3], 10, 0]], {}, "mirror");
    const isContextLabel = (label: string) => (CONTEXT_COVERAGE_LABELS as readonly string[]).includes(label);
    expect(coverageLabels(built, (await runCase(built)).trace).filter(isContextLabel)).toEqual([]);
    const bounded = { ...built, engine: { ...built.engine, contextLength: 16, draftContextLength: 12 } };
    expect(
      coverageLabels(bounded, (await runCase(bounded)).trace)
        .filter(isContextLabel)
        .sort(),
    ).toEqual([...CONTEXT_COVERAGE_LABELS].sort());
  });

  it("finds the slot corners when a request takes the slot a longer one held, and not on fresh slots", async () => {
    const built = testCase(
      { numSteps: 2 },
      [
        [[1, 5, 9, 13, 17, 3], 6, 0],
        [[1, 5, 9, 13, 17, 4], 4, 0],
      ],
      {},
      "mirror",
    );
    const isSlotLabel = (label: string) => (SLOT_COVERAGE_LABELS as readonly string[]).includes(label);
    expect(coverageLabels(built, (await runCase(built)).trace).filter(isSlotLabel)).toEqual([]);
    const oneSlot = { ...built, engine: { ...built.engine, requestSlots: 1 } };
    expect(
      coverageLabels(oneSlot, (await runCase(oneSlot)).trace)
        .filter(isSlotLabel)
        .sort(),
    ).toEqual([...SLOT_COVERAGE_LABELS].sort());
  });

  it("finds the stochastic verification corners in a sampling tree run, and not in the same run greedy", async () => {
    const prompt = [1, 5, 9, 13, 17, 3, 4, 8];
    const built = testCase({ numSteps: 3, topk: 2, numDraftTokens: 6 }, [[prompt, 12, 0]]);
    const isStochasticLabel = (label: string) => (STOCHASTIC_COVERAGE_LABELS as readonly string[]).includes(label);
    expect(coverageLabels(built, (await runCase(built)).trace).filter(isStochasticLabel)).toEqual([]);
    built.workload.requests[0].sampling = { temperature: 1.3, seed: 4 };
    expect(coverageLabels(built, (await runCase(built)).trace).filter(isStochasticLabel)).toEqual([
      ...STOCHASTIC_COVERAGE_LABELS,
    ]);
  });

  it("finds each request-semantics corner in a run built to hit it, and only there", async () => {
    // The mirror accepts all S = 3 drafts: after the prefill's token, rounds commit 4 tokens each, so the
    // second round's accepted run (output tokens 5..8) crosses the cap of 7.
    const prompt = [1, 5, 9, 13, 17, 3];
    const maxNewTokens = 7;
    const withSampling = (sampling?: SamplingParams) => {
      const built = testCase({ numSteps: 3 }, [[prompt, maxNewTokens, 0]], {}, "mirror");
      if (sampling) built.workload.requests[0].sampling = sampling;
      return built;
    };
    const plain = await runCase(withSampling());
    const output = plain.trace.requests![0].output;
    // A stop id first emitted inside the round whose accepted run reaches the cap, before its last token.
    const last = readRounds(plain.trace).at(-1)!;
    const committed = last.verifyRows[0].position - prompt.length + 1;
    expect(committed + last.result.acceptLen).toBeGreaterThanOrEqual(maxNewTokens);
    const stopAt = output.findIndex(
      (token, i) => i >= committed && i < maxNewTokens - 1 && !output.slice(0, i).includes(token),
    );
    expect(stopAt, `no fresh token in the last round of ${output.join(" ")}`).toBeGreaterThanOrEqual(0);
    // A token the target never emits here, biased far above every logit.
    const unseen = [...Array(64).keys()].find((token) => token > 3 && !output.includes(token))!;
    const corners: [SamplingCoverageLabel, SamplingParams][] = [
      ["stop id and cap inside one accepted run", { stopTokenIds: [output[stopAt]] }],
      ["min tokens end inside a round", { minNewTokens: 3 }],
      ["penalties change the greedy token", { presencePenalty: 2, repetitionPenalty: 2 }],
      ["bias forces a token the draft does not predict", { logitBias: { [unseen]: 100 } }],
    ];
    const isSamplingLabel = (label: string) => (SAMPLING_COVERAGE_LABELS as readonly string[]).includes(label);
    expect(coverageLabels(withSampling(), plain.trace).filter(isSamplingLabel)).toEqual([]);
    for (const [label, sampling] of corners) {
      const built = withSampling(sampling);
      const labels = coverageLabels(built, (await runCase(built)).trace);
      expect(labels, `${label}: ${JSON.stringify(sampling)}`).toContain(label);
      // The same options on a run that cannot show the corner: target-only has no rounds.
      const targetOnly = { ...built, engine: { ...built.engine, mode: "target-only" as const } };
      const reached = coverageLabels(targetOnly, (await runCase(targetOnly)).trace);
      if (label !== "penalties change the greedy token") expect(reached).not.toContain(label);
    }
  });

  it("a lone unchunked request on page 1 hits none but the cut round", async () => {
    // The mirror accepts all 3 drafts; max new tokens 2 cuts the first round after one token.
    const plain = testCase({ numSteps: 3 }, [[[1, 5, 9, 13, 17, 3], 2, 0]], {}, "mirror");
    expect(coverageLabels(plain, (await runCase(plain)).trace)).toEqual(["request finishes mid-round"]);
  });

  it("the counter fails a label only when the runs show it below 2% (QuickCheck's checkCoverage)", () => {
    // 0 of 2,000 runs: the Wilson upper end (confidence 1 - 1e-6) is about 1.1%, under 0.9 x 2%.
    const counter = new CoverageCounter();
    for (let i = 0; i < 2000; i++)
      counter.add(i < 100 ? [...COVERAGE_LABELS] : i < 101 ? ["batch of 2+ requests"] : []);
    counter.add([]);
    const many = new CoverageCounter();
    for (let i = 0; i < 2000; i++) many.add(i < 1 ? ["batch of 2+ requests"] : []);
    expect(many.report().below).toContain("batch of 2+ requests");
    expect(counter.report().below).toEqual([]);
  });

  it("1 in 100 runs is not enough to judge: reported as undecided, not failing", () => {
    const counter = new CoverageCounter();
    for (let i = 0; i < 100; i++) counter.add(i < 1 ? [...COVERAGE_LABELS] : i < 2 ? ["batch of 2+ requests"] : []);
    const report = counter.report();
    expect(report.runs).toBe(100);
    expect(report.below).toEqual([]);
    expect(report.undecided).toEqual(COVERAGE_LABELS.filter((label) => label !== "batch of 2+ requests"));
    expect(counter.lines()[0]).toMatch(/1\.0% \(1\/100\)/);
  });

  it("exactly 2% passes", () => {
    const counter = new CoverageCounter();
    for (let i = 0; i < 50; i++) counter.add(i === 0 ? [...COVERAGE_LABELS] : []);
    expect(counter.report().below).toEqual([]);
    expect(counter.report().undecided).toEqual([]);
  });

  it("a label no trace can show (a field the engine lacks) is reported with the field, never judged", () => {
    // The newcomer's engine: verify results without `emitted`, so "request finishes mid-round" never shows.
    const counter = new CoverageCounter();
    for (let i = 0; i < 5000; i++)
      counter.add(
        COVERAGE_LABELS.filter((label) => label !== "request finishes mid-round"),
        { "request finishes mid-round": "events[].verify[].emitted" },
      );
    const report = counter.report();
    expect(report.unobservable).toEqual({ "request finishes mid-round": "events[].verify[].emitted" });
    expect(report.below).toEqual([]);
    expect(report.undecided).toEqual([]);
  });

  it("unobservableLabels names the missing field of a trace without emitted tokens", async () => {
    const plain = testCase({ numSteps: 3 }, [[[1, 5, 9, 13, 17, 3], 2, 0]], {}, "mirror");
    const trace = structuredClone((await runCase(plain)).trace);
    expect(unobservableLabels(trace)).toEqual({});
    for (const event of trace.events) for (const result of event.verify ?? []) delete result.emitted;
    expect(unobservableLabels(trace)).toEqual({ "request finishes mid-round": "events[].verify[].emitted" });
  });
});
