// Coverage corners of request semantics under speculation, read from a case and its trace: where the
// stop / length / min-tokens / penalty / bias bugs live (issue: sglang 31599 and PR 33643, vLLM 42744).
import type { Case } from "../case/case.ts";
import { hasPenalties, logitBiasEntries, stopTokenIdsOf } from "../sampling/params.ts";
import type { Trace, TraceRow } from "../trace/schema.ts";
import { readRounds } from "../laws/rounds.ts";

export const SAMPLING_COVERAGE_LABELS = [
  /** A round's accepted run reaches the cap, and a stop id inside it ends the request first. */
  "stop id and cap inside one accepted run",
  /** Min new tokens ends strictly inside a round's accepted path (EOS and stop ids masked, then not). */
  "min tokens end inside a round",
  /** A target row of a request with penalties predicts another token than its raw argmax. */
  "penalties change the greedy token",
  /** A positive logit bias makes a verify row predict a token none of its draft children proposed. */
  "bias forces a token the draft does not predict",
] as const;

export type SamplingCoverageLabel = (typeof SAMPLING_COVERAGE_LABELS)[number];

/** Children of a verify row: rows naming it as parent (a chain without parents: the next row). */
function childrenOf(rows: readonly TraceRow[], index: number): TraceRow[] {
  return rows.filter((row, i) => i > 0 && (row.parent ?? i - 1) === index);
}

export function samplingCoverageLabels(testCase: Readonly<Case>, trace: Trace): SamplingCoverageLabel[] {
  const requests = new Map(testCase.workload.requests.map((request) => [request.id, request]));
  const outputs = new Map((trace.requests ?? []).map((request) => [request.id, request]));
  if (![...requests.values()].some((request) => request.sampling)) return [];
  const found = new Set<SamplingCoverageLabel>();
  for (const round of readRounds(trace)) {
    const request = requests.get(round.request);
    const root = round.verifyRows[0];
    if (!request?.sampling || !root) continue;
    // Output tokens committed before the round: x_L is output token L - promptLength.
    const committed = root.position - request.prompt.length + 1;
    const { acceptLen, emitted, finished } = round.result;
    const output = outputs.get(round.request);
    if (
      finished &&
      output?.finishReason === "stop" &&
      stopTokenIdsOf(request.sampling).has(output.output[output.output.length - 1]) &&
      (emitted?.length ?? acceptLen) < acceptLen &&
      committed + acceptLen >= request.maxNewTokens
    )
      found.add("stop id and cap inside one accepted run");
    const minNewTokens = request.sampling.minNewTokens ?? 0;
    if (committed < minNewTokens && minNewTokens < committed + acceptLen) found.add("min tokens end inside a round");
    const biased = new Set(logitBiasEntries(request.sampling).flatMap(([token, bias]) => (bias > 0 ? [token] : [])));
    round.verifyRows.forEach((row, index) => {
      if (row.rawPredict === undefined || row.predict === undefined || row.rawPredict === row.predict) return;
      const children = childrenOf(round.verifyRows, index);
      if (biased.has(row.predict) && children.length > 0 && !children.some((child) => child.token === row.predict))
        found.add("bias forces a token the draft does not predict");
    });
  }
  for (const event of trace.events) {
    for (const row of event.rows) {
      if (row.rawPredict === undefined || row.rawPredict === row.predict) continue;
      if (hasPenalties(requests.get(row.request)?.sampling)) found.add("penalties change the greedy token");
    }
  }
  return SAMPLING_COVERAGE_LABELS.filter((label) => found.has(label));
}
