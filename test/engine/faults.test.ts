// Each fault, switched on, makes a law fail without crashing the engine; off, the same case passes.
import { describe, expect, it } from "vitest";
import type { AbortEvent, Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import { FAULT_NAMES, type FaultName } from "../../src/engine/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import type { DraftKind } from "../../src/model/spec.ts";
import type { EngineConfig } from "../../src/engine/config.ts";

/** Where each fault shows: the draft that exposes it and the laws expected to catch it. */
const EXPOSURE: Record<
  FaultName,
  { draft: DraftKind; laws: string[]; engine?: Partial<EngineConfig>; retracts?: AbortEvent[] }
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
};

function faultCase(
  draft: DraftKind,
  faults: FaultName[],
  engine: Partial<EngineConfig> = {},
  retracts: AbortEvent[] = [],
): Case {
  const base = defaultCase({
    preset: "tiny",
    draft,
    seed: 5,
    numRequests: 3,
    maxNewTokens: 12,
    engine: { numSteps: 3, numDraftTokens: 4, chunkSize: 3, pageSize: 2, faults, ...engine },
  });
  // Arrive together so batches pack several requests (the mask leak needs a neighbour).
  return {
    ...base,
    workload: {
      ...base.workload,
      retracts,
      requests: base.workload.requests.map((request) => ({ ...request, arrivalStep: 0 })),
    },
  };
}

async function failingLaws(testCase: Case): Promise<string[]> {
  const targetOnly = await runCase({
    ...testCase,
    engine: { ...testCase.engine, mode: "target-only", faults: [] },
    workload: { ...testCase.workload, retracts: [] },
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
      const { draft, laws, engine, retracts } = EXPOSURE[fault];
      const failing = await failingLaws(faultCase(draft, [fault], engine, retracts));
      for (const law of laws) expect(failing).toContain(law);
      expect(await failingLaws(faultCase(draft, [], engine, retracts))).toEqual([]);
    });
  }
});
