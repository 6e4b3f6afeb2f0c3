// What the HTML report shows, as plain data: a command's verdict table and coverage, and each failure with its
// shrunk case and the two runs to compare (the failing run first). Renderers (page.ts and its parts) read only
// this; failure-view.ts builds a failure's data from a failure record. Issue 27: one self-contained HTML file
// per check or failure.
import type { Trace } from "../../trace/schema.ts";

/** "no-case": no generated case applied to the law (it judged nothing, as "not-checkable"). */
export type VerdictStatus = "holds" | "fails" | "not-checkable" | "no-case";

/** One law's line in the verdict table: a single check's verdict, or a property's counts over many runs. */
export interface VerdictRow {
  law: string;
  status: VerdictStatus;
  runs?: number;
  passed?: number;
  failed?: number;
  ties?: number;
  notCheckable?: number;
  /** The violation (fails) or why it could not be checked. */
  detail?: string;
}

export interface CoverageView {
  runs: number;
  /** Every label with the runs that reached it. */
  labels: readonly (readonly [string, number])[];
  /** Labels under the floor (enforced runs only). */
  below: readonly string[];
}

export interface RunView {
  /** Whose run: "reference engine", the external engine's name, "reference engine, faults off". */
  title: string;
  trace: Trace;
}

export interface FailureView {
  law: string;
  violation: { message: string; request?: number; event?: number };
  /** The command that replays it. */
  replay: string;
  /** An invariance failure: which run diverged from the reference, the case's or its twin (judgementLine). */
  diverged?: string;
  /** The shrunk case: a one-line summary and the JSON. */
  caseSummary: string;
  caseJson: string;
  /** The failing run, and the run it is compared with (absent when there is none to compare). */
  runs: readonly [RunView, RunView?];
  /** The coverage labels the failing run reached. */
  labels?: readonly string[];
}

export interface HtmlReport {
  title: string;
  /** The command and its seed, one line. */
  subtitle: string;
  ok: boolean;
  /** The verdict line: what held, failed and judged nothing, counted (never "holds" for the whole run). */
  verdict: string;
  verdicts: readonly VerdictRow[];
  coverage?: CoverageView;
  failures: readonly FailureView[];
}
