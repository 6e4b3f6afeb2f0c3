// Coverage labels (docs/design.md section 4): the corners where the bugs live, read from a case and its run.
// The property suites count them over their runs and judge each label's rate against 2% as QuickCheck's
// checkCoverage does (issue 25): a label fails only when the data show, with confidence 1 - 1e-6, that its rate
// is below the requirement (the Wilson interval's upper end under 0.9 x 2%); a rate the runs cannot tell from 2%
// is "not enough runs to judge", reported, not failing. A label whose corner the engine's trace cannot show (a
// field it reads is absent) is reported with that field and never enforced.
import type { Case } from "../case/case.ts";
import type { Trace } from "../trace/schema.ts";
import { schedulingCorners } from "./scheduling-coverage.ts";
import { SAMPLING_COVERAGE_LABELS, samplingCoverageLabels } from "./sampling-coverage.ts";
import { STOCHASTIC_COVERAGE_LABELS, stochasticCoverageLabels } from "./stochastic-coverage.ts";
import { GRAMMAR_COVERAGE_LABELS, grammarCoverageLabels } from "./grammar-coverage.ts";
import { SCHEDULE_COVERAGE_LABELS, scheduleCoverageLabels } from "./schedule-coverage.ts";
import { CONTEXT_COVERAGE_LABELS, contextCoverageLabels } from "./context-coverage.ts";
import { SLOT_COVERAGE_LABELS, slotCoverageLabels } from "./slot-coverage.ts";
import { TEXT_COVERAGE_LABELS, textCoverageLabels } from "./text-coverage.ts";
import { CASE_COVERAGE_LABELS, caseCoverageLabels } from "./case-coverage.ts";

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
  ...GRAMMAR_COVERAGE_LABELS,
  ...SCHEDULE_COVERAGE_LABELS,
  ...CONTEXT_COVERAGE_LABELS,
  ...SLOT_COVERAGE_LABELS,
  ...TEXT_COVERAGE_LABELS,
  ...CASE_COVERAGE_LABELS,
] as const;

export type CoverageLabel = (typeof COVERAGE_LABELS)[number];

/** The share of runs each label must reach. */
export const MIN_COVERAGE = 0.02;
/** One-sided normal quantile of the coverage judgement's confidence (1 - 1e-6). */
const COVERAGE_Z = 4.753;
/** QuickCheck's tolerance: a label fails only when its rate is shown below this fraction of the requirement. */
const COVERAGE_TOLERANCE = 0.9;

/** The Wilson score interval of count / runs at COVERAGE_Z. Pure. */
export function wilsonInterval(count: number, runs: number): { low: number; high: number } {
  if (runs === 0) return { low: 0, high: 1 };
  const z2 = COVERAGE_Z * COVERAGE_Z;
  const share = count / runs;
  const centre = share + z2 / (2 * runs);
  const spread = COVERAGE_Z * Math.sqrt((share * (1 - share)) / runs + z2 / (4 * runs * runs));
  return { low: (centre - spread) / (1 + z2 / runs), high: (centre + spread) / (1 + z2 / runs) };
}

/** A label's verdict: shown below the requirement, shown at or above it, or not enough runs to tell. Pure. */
export function coverageVerdict(count: number, runs: number): "insufficient" | "sufficient" | "undecided" {
  const { low, high } = wilsonInterval(count, runs);
  if (high < COVERAGE_TOLERANCE * MIN_COVERAGE) return "insufficient";
  return low >= MIN_COVERAGE || count / runs >= MIN_COVERAGE ? "sufficient" : "undecided";
}

/**
 * Labels whose corner this trace cannot show, with the field it lacks: "request finishes mid-round" reads the
 * verify results' emitted tokens (issue 25: a third-party engine without `emitted` failed the coverage floor
 * forever). Pure.
 */
export function unobservableLabels(trace: Trace): Partial<Record<CoverageLabel, string>> {
  const missing: Partial<Record<CoverageLabel, string>> = {};
  const results = trace.events.flatMap((event) => event.verify ?? []);
  if (results.length > 0 && results.every((result) => result.emitted === undefined))
    missing["request finishes mid-round"] = "events[].verify[].emitted";
  return missing;
}

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
  labels.push(
    ...samplingCoverageLabels(testCase, trace),
    ...stochasticCoverageLabels(trace),
    ...grammarCoverageLabels(testCase, trace),
    ...scheduleCoverageLabels(testCase, trace),
    ...contextCoverageLabels(testCase, trace),
    ...slotCoverageLabels(trace),
    ...textCoverageLabels(testCase, trace),
    ...caseCoverageLabels(testCase),
  );
  return labels;
}

export interface CoverageReport {
  runs: number;
  counts: Record<CoverageLabel, number>;
  /** Labels shown below MIN_COVERAGE (coverageVerdict "insufficient"): these fail. */
  below: CoverageLabel[];
  /** Labels under MIN_COVERAGE of the runs that the runs cannot yet tell from it: reported, not failing. */
  undecided: CoverageLabel[];
  /** Labels no run's trace could show, with the field the traces lack: reported, never enforced. */
  unobservable: Partial<Record<CoverageLabel, string>>;
}

/** A counter as data (a chunk's record, a shard's report): everything its verdicts read. */
export interface CoverageRecord {
  runs: number;
  counts: Record<string, number>;
  /** Per label, runs from a space that cannot reach it. */
  outside: Record<string, number>;
  /** Per label, runs whose trace could not show it, and the field it lacked. */
  blind: Record<string, { runs: number; field: string }>;
}

export class CoverageCounter {
  runs = 0;
  readonly counts = Object.fromEntries(COVERAGE_LABELS.map((label) => [label, 0])) as Record<CoverageLabel, number>;
  /** Runs drawn from a space that cannot reach the label (its dimension off): not in the label's share. */
  readonly outside = Object.fromEntries(COVERAGE_LABELS.map((label) => [label, 0])) as Record<CoverageLabel, number>;
  /** Per label: runs whose trace could not show it, and the field it lacked. */
  private readonly blind = new Map<CoverageLabel, { runs: number; field: string }>();

  /**
   * `unobservable`: labels this run's trace could not show, with the field it lacked; `outside`: the labels this
   * run's space cannot reach (a dimension it does not draw).
   */
  add(
    labels: readonly CoverageLabel[],
    unobservable: Partial<Record<CoverageLabel, string>> = {},
    outside: readonly CoverageLabel[] = [],
  ): void {
    this.runs += 1;
    for (const label of labels) this.counts[label] += 1;
    for (const label of outside) this.outside[label] += 1;
    for (const [label, field] of Object.entries(unobservable) as [CoverageLabel, string][]) {
      const entry = this.blind.get(label) ?? { runs: 0, field };
      entry.runs += 1;
      this.blind.set(label, entry);
    }
  }

  merge(other: CoverageCounter): void {
    this.runs += other.runs;
    for (const label of COVERAGE_LABELS) {
      this.counts[label] += other.counts[label];
      this.outside[label] += other.outside[label];
    }
    for (const [label, entry] of other.blind) {
      const mine = this.blind.get(label) ?? { runs: 0, field: entry.field };
      mine.runs += entry.runs;
      this.blind.set(label, mine);
    }
  }

  /** The counter as data; `fromRecord` reads it back, so a merge of records judges as the counters would. */
  toRecord(): CoverageRecord {
    return {
      runs: this.runs,
      counts: { ...this.counts },
      outside: { ...this.outside },
      blind: Object.fromEntries([...this.blind].map(([label, entry]) => [label, { ...entry }])),
    };
  }

  static fromRecord(record: CoverageRecord): CoverageCounter {
    const counter = new CoverageCounter();
    counter.runs = record.runs;
    for (const label of COVERAGE_LABELS) {
      counter.counts[label] = record.counts[label] ?? 0;
      counter.outside[label] = record.outside[label] ?? 0;
      const blind = record.blind[label];
      if (blind) counter.blind.set(label, { ...blind });
    }
    return counter;
  }

  /** Runs that could reach the label. */
  eligible(label: CoverageLabel): number {
    return this.runs - this.outside[label];
  }

  /**
   * Labels judged statistically over the runs that could reach them; a label no run could reach is not judged here
   * (the properties drawing its dimension judge it), nor one no run's trace could show (reported with its field).
   */
  report(): CoverageReport {
    const unobservable: Partial<Record<CoverageLabel, string>> = {};
    for (const [label, entry] of this.blind)
      if (entry.runs === this.runs && this.counts[label] === 0) unobservable[label] = entry.field;
    const judged = COVERAGE_LABELS.filter(
      (label) => unobservable[label] === undefined && (this.runs === 0 || this.eligible(label) > 0),
    );
    const verdict = (label: CoverageLabel) => coverageVerdict(this.counts[label], this.eligible(label));
    return {
      runs: this.runs,
      counts: { ...this.counts },
      below: judged.filter((label) => verdict(label) === "insufficient"),
      undecided: judged.filter((label) => verdict(label) === "undecided"),
      unobservable,
    };
  }

  /** fc.statistics-style lines: label, share, count (of the runs that could reach it). */
  lines(): string[] {
    const width = Math.max(...COVERAGE_LABELS.map((label) => label.length)) + 1;
    return COVERAGE_LABELS.map((label) => {
      const eligible = this.eligible(label);
      return `${label.padEnd(width)} ${eligible ? ((100 * this.counts[label]) / eligible).toFixed(1).padStart(5) : "  0.0"}% (${this.counts[label]}/${eligible})`;
    });
  }
}
