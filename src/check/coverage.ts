// Coverage labels (docs/design.md section 4): the corners where the bugs live, read from a case and its run.
// The property suites count them over their runs and fail when one falls below 2%.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { schedulingCorners } from "./scheduling-coverage.ts";
import { SAMPLING_COVERAGE_LABELS, samplingCoverageLabels } from "./sampling-coverage.ts";
import { STOCHASTIC_COVERAGE_LABELS, stochasticCoverageLabels } from "./stochastic-coverage.ts";

export const COVERAGE_LABELS = [
  /** A non-final prefill chunk ending within S tokens of the prompt end (the chunked tail token's corner). */
  "chunk ends within S of prompt end",
  /** A verify round cut by EOS or max new tokens (fewer tokens emitted than accepted). */
  "request finishes mid-round",
  /** A verify forward packing two or more requests. */
  "batch of 2+ requests",
  /** The same with trees wider than a chain: K > 1 and N > S + 1 (where the bonus stride matters). */
  "batch of 2+ with K > 1 and N > S + 1",
  /** An abort landed on an active request, between two forwards. */
  "abort between forwards",
  /** A retract landed on an active request, between two forwards. */
  "retract between forwards",
  /** Pages above 1 and a request's verify rows spanning a page boundary. */
  "page boundary inside a verify",
  /** Overlap: a request finished while its next round was already planned (a zombie round, discarded). */
  "finish with a future token in flight",
  /** Overlap: an abort or retract landed while the request's results were in flight (discarded). */
  "abort or retract with a future token in flight",
  /** A prefix hit whose shared prefix ends inside a page (the hit is cut back to the page boundary). */
  "prefix hit mid-page",
  /** A prefix hit whose shared prefix ends at a page boundary (page size > 1). */
  "prefix hit at a page boundary",
  /** The prefix cache evicted while a request held pages it had taken by a prefix hit. */
  "eviction while a prefix is shared",
  /** A padded graph replay ran at least one padding row. */
  "padded bucket with a padding row",
  /** A verify forward where one request verifies no draft and another all S (prompt lookup). */
  "empty-draft round next to a full one",
  ...SAMPLING_COVERAGE_LABELS,
  ...STOCHASTIC_COVERAGE_LABELS,
] as const;

export type CoverageLabel = (typeof COVERAGE_LABELS)[number];

/** Below this share of runs a label fails the suite. */
export const MIN_COVERAGE = 0.02;

export function coverageLabels(testCase: Case, trace: Trace): CoverageLabel[] {
  const labels: CoverageLabel[] = [];
  const S = testCase.engine.numSteps;
  const N = testCase.engine.numDraftTokens;
  const wideTree = testCase.engine.topk > 1 && N > S + 1;
  const P = testCase.engine.pageSize;
  const promptLength = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt.length]));
  let chunkTail = false;
  let midRound = false;
  let batch = false;
  let pageInVerify = false;
  for (const event of trace.events) {
    if (event.phase === "prefill") {
      const ends = new Map<number, number>();
      for (const row of event.rows) ends.set(row.request, Math.max(ends.get(row.request) ?? 0, row.position + 1));
      for (const [request, end] of ends) {
        const n = promptLength.get(request) ?? 0;
        if (end < n && n - end <= S) chunkTail = true;
      }
    }
    if (event.phase === "verify") {
      if ((event.verify?.length ?? 0) >= 2 || new Set(event.rows.map((row) => row.request)).size >= 2) batch = true;
      for (const result of event.verify ?? [])
        if (result.finished && (result.emitted?.length ?? result.acceptLen) < result.acceptLen) midRound = true;
      if (P > 1) {
        const roots = new Map<number, number>();
        for (const row of event.rows) if (!roots.has(row.request)) roots.set(row.request, row.position);
        for (const root of roots.values())
          if (Math.floor(root / P) !== Math.floor((root + N - 1) / P)) pageInVerify = true;
      }
    }
  }
  const active = new Set(trace.events.flatMap((event) => event.rows.map((row) => row.request)));
  const abortLanded = (trace.requests ?? []).some(
    (request) => request.finishReason === "abort" && active.has(request.id),
  );
  if (chunkTail) labels.push("chunk ends within S of prompt end");
  if (midRound) labels.push("request finishes mid-round");
  if (batch) labels.push("batch of 2+ requests");
  if (batch && wideTree) labels.push("batch of 2+ with K > 1 and N > S + 1");
  if (abortLanded) labels.push("abort between forwards");
  if ((trace.lifecycle ?? []).some((entry) => entry.kind === "retract")) labels.push("retract between forwards");
  if (pageInVerify) labels.push("page boundary inside a verify");
  const corners = schedulingCorners(trace, P, S);
  if (corners.finishInFlight) labels.push("finish with a future token in flight");
  if (corners.abortOrRetractInFlight) labels.push("abort or retract with a future token in flight");
  if (corners.prefixHitMidPage) labels.push("prefix hit mid-page");
  if (corners.prefixHitAtBoundary) labels.push("prefix hit at a page boundary");
  if (corners.sharedPrefixEvicted) labels.push("eviction while a prefix is shared");
  if (corners.paddingRows) labels.push("padded bucket with a padding row");
  if (corners.emptyDraftNextToFull) labels.push("empty-draft round next to a full one");
  labels.push(...samplingCoverageLabels(testCase, trace), ...stochasticCoverageLabels(trace));
  return labels;
}

export interface CoverageReport {
  runs: number;
  counts: Record<CoverageLabel, number>;
  /** Labels below MIN_COVERAGE of runs. */
  below: CoverageLabel[];
}

export class CoverageCounter {
  runs = 0;
  readonly counts = Object.fromEntries(COVERAGE_LABELS.map((label) => [label, 0])) as Record<CoverageLabel, number>;

  add(labels: readonly CoverageLabel[]): void {
    this.runs += 1;
    for (const label of labels) this.counts[label] += 1;
  }

  merge(other: CoverageCounter): void {
    this.runs += other.runs;
    for (const label of COVERAGE_LABELS) this.counts[label] += other.counts[label];
  }

  report(): CoverageReport {
    const below = COVERAGE_LABELS.filter((label) => this.runs === 0 || this.counts[label] / this.runs < MIN_COVERAGE);
    return { runs: this.runs, counts: { ...this.counts }, below };
  }

  /** fc.statistics-style lines: label, share, count. */
  lines(): string[] {
    const width = Math.max(...COVERAGE_LABELS.map((label) => label.length)) + 1;
    return COVERAGE_LABELS.map(
      (label) =>
        `${label.padEnd(width)} ${this.runs ? ((100 * this.counts[label]) / this.runs).toFixed(1).padStart(5) : "  0.0"}% (${this.counts[label]}/${this.runs})`,
    );
  }
}
