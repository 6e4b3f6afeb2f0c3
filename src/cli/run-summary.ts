// The numbers `specconf run` reports, as one plain object (the --json output).
import type { Case } from "../case/case.ts";
import type { RunResult } from "../trace/run-result.ts";
import { resolveModelSpec } from "../case/models.ts";
import { law as acceptanceCorrectness } from "../laws/acceptance-correctness.ts";
import type { Law } from "../laws/definition.ts";
import { law as draftReference } from "../laws/draft-reference.ts";
import type { LawResult } from "../laws/law.ts";
import { law as lossless } from "../laws/lossless.ts";
import { acceptanceStats } from "../laws/mirror-acceptance.ts";

/** The --json booleans and the laws they come from. */
export const LAW_KEYS = { lossless, acceptanceCorrect: acceptanceCorrectness, draftReference } as const;

export interface RunSummary {
  model: string;
  draft: string | null;
  engine: {
    numSteps: number;
    topk: number;
    numDraftTokens: number;
    multiLayer: boolean;
    graphReplay: boolean;
    retracts: number;
    chunkSize: number | null;
    pageSize: number;
    ep: string;
    dtype: string;
    ortVersion: string;
    threads: number;
  };
  outputs: { id: number; promptLength: number; tokens: number[]; finishReason: string; acceptLens: number[] }[];
  targetOnlyOutputs: number[][];
  meanAcceptLen: number;
  /** Share of rounds accepting all S drafts, among rounds not cut by max new tokens or EOS (null: no such round). */
  fullAcceptRate: number | null;
  /** acceptLenHistogram[a] = rounds with accept_len a (index 0 unused). */
  acceptLenHistogram: number[];
  ties: number;
  lossless: boolean | null;
  acceptanceCorrect: boolean | null;
  draftReference: boolean | null;
  laws: LawResult[];
}

function verdict(results: readonly LawResult[], law: Law): boolean | null {
  const result = results.find((candidate) => candidate.law === law.name);
  return !result || result.status === "not-checkable" ? null : result.status === "holds";
}

export function summarize(
  testCase: Case,
  speculative: RunResult,
  targetOnly: RunResult,
  laws: LawResult[],
): RunSummary {
  const spec = resolveModelSpec(testCase.model);
  const stats = acceptanceStats(speculative.trace, testCase.engine.numSteps);
  const prompts = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt.length]));
  return {
    model: spec.name,
    draft: testCase.engine.mode === "speculative" ? (testCase.draft?.kind ?? null) : null,
    engine: {
      numSteps: testCase.engine.numSteps,
      topk: testCase.engine.topk,
      numDraftTokens: testCase.engine.numDraftTokens,
      multiLayer: testCase.engine.multiLayer === true,
      graphReplay: testCase.engine.graphReplay === true,
      retracts: speculative.trace.lifecycle?.filter((entry) => entry.kind === "retract").length ?? 0,
      chunkSize: testCase.engine.chunkSize,
      pageSize: testCase.engine.pageSize,
      ep: testCase.engine.runtime.ep,
      dtype: spec.dtype,
      ortVersion: speculative.trace.engine.ortVersion ?? "unknown",
      threads: testCase.engine.runtime.threads,
    },
    outputs: speculative.outputs.map((output) => ({
      id: output.id,
      promptLength: prompts.get(output.id) ?? 0,
      tokens: output.tokens,
      finishReason: output.finishReason,
      acceptLens: output.acceptLens,
    })),
    targetOnlyOutputs: targetOnly.outputs.map((output) => output.tokens),
    meanAcceptLen: stats.meanAcceptLen,
    fullAcceptRate: stats.uncutRounds > 0 ? stats.fullAcceptRounds / stats.uncutRounds : null,
    acceptLenHistogram: stats.histogram,
    ties: laws.reduce((sum, law) => sum + law.ties, 0),
    lossless: verdict(laws, LAW_KEYS.lossless),
    acceptanceCorrect: verdict(laws, LAW_KEYS.acceptanceCorrect),
    draftReference: verdict(laws, LAW_KEYS.draftReference),
    laws,
  };
}
