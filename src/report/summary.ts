// The one summary every command's report is rendered from (text, JSON, JUnit; reporters.ts): a command's
// result as data, complete enough that a reporter needs nothing else. That is what lets `specconf merge`
// combine the JSON summaries of shards and render them as one run would have been. The JSON reporter
// prints `summary` as it is, so each command's --json object is this type.
import type { LawVerdict } from "../check/runner.ts";
import type { ChunkRecord } from "../properties/chunks.ts";
import type { Capabilities } from "../adapter/protocol.ts";
import type { RelaxationLog } from "../profiles/profiles.ts";
import type { ValidationReport } from "../validate/validate.ts";
import type { FailureView } from "./html/report-data.ts";
import type { InvarianceJudgement } from "../failures/invariance-runs.ts";
import type { JudgedLaws, LawRequirement } from "./judged.ts";

/** One law's row of a check: counts over the runs, and its first failure with the command replaying it. */
export interface LawSummary {
  name: string;
  runs: number;
  passed: number;
  failed: number;
  ties: number;
  notCheckable: number;
  seconds: number;
  /** The violation of the law's first failure and the command that replays exactly it. */
  violation?: string;
  replay?: string;
  /** The failure as the property described it (seed, path, shrunk case): JUnit's failure text. */
  message?: string;
  /** Why runs were not checkable, with how many runs said so (at most five distinct reasons). */
  reasons?: Record<string, number>;
  /** An invariance law's failure: which run diverged from the reference, the case's or its twin (issue 34). */
  diverged?: string;
}

export interface CheckSummary {
  ok: boolean;
  seed: number;
  /** With --engine: the command, the name and version it declared, and restarts after failed cases. */
  engine?: { command: string; name: string; restarts: number };
  laws: LawSummary[];
  /** Every selected law held, failed, never checkable or with no applicable case, and why (judged.ts). */
  judged: JudgedLaws;
  /** --require-laws: what was required, and why it was not met (absent when it was). */
  required?: LawRequirement & { unmet?: string };
  coverage: {
    runs: number;
    labels: Record<string, number>;
    below: string[];
    unreachable?: string[];
    /** Whether the 2% floor decided the verdict (not with --law, nor under 50 runs). */
    enforced?: boolean;
    /** Why it did not ("--law given", "under 50 runs"). */
    notEnforcedBecause?: string;
    /** Labels under 2% that the runs cannot yet tell from it: reported, not failing (coverage.ts). */
    undecided?: string[];
    /** Labels the engine's traces cannot show, with the field they lack: reported, never enforced. */
    unobservable?: Record<string, string>;
  };
  /** Seconds of the cases' own runs and target-only baselines (the laws' rows count the rest). */
  runSeconds?: number;
  /** With --engine: declared features no generated case exercised (laws that judged nothing: `judged`). */
  notExercised?: string[];
  /** With --engine: properties the engine could not run whose laws other properties' runs checked all the same. */
  propertiesNotRun?: string[];
  skipped?: number;
  /** With --engine --pins: each pinned law, its finding, and whether it still failed. */
  pinned?: { law: string; finding: string; reproduced: boolean }[];
  /** With --engine --profile: the relaxations that changed what a law saw, and how often. */
  relaxations?: ReturnType<RelaxationLog["entries"]>;
  /** With --shard: which shard, and what `specconf merge` recomputes the verdict from (chunks.ts). */
  shard?: ShardRecord;
}

export interface ShardRecord {
  index: number;
  count: number;
  /** Runs per law property, the laws asked for (in report order), whether --law chose them. */
  runs: number;
  selected: string[];
  lawFilter: boolean;
  /** The properties in suite order, and this shard's counted chunks of them. */
  properties: string[];
  chunks: ChunkRecord[];
  /** Properties the engine could not run at all, the engine's declared capabilities and the pins. */
  notExercised: { law: string; reason: string }[];
  capabilities?: Capabilities;
  pins?: [string, string][];
  /** --require-laws, for the merge to enforce. */
  required?: LawRequirement;
}

/** `check --engine --golden`: every golden case's verdicts through the engine. */
export interface EngineCheckSummary {
  engine: string;
  /** The command that started it. */
  command?: string;
  ok: boolean;
  /** Law verdicts that were checked (not "not checkable"): none is not a pass. */
  checked?: number;
  cases: { suite: string; case: string; skipped?: string; laws: LawVerdict[] }[];
  /** Every law held, failed, never checkable or with no applicable golden case (judged.ts). */
  judged?: JudgedLaws;
  relaxations: ReturnType<RelaxationLog["entries"]>;
}

/** `mutants`: one fault's hunt. */
export interface FaultReport {
  name: string;
  killed: boolean;
  /** The first law failing on the shrunk counterexample. */
  law: string | null;
  laws: string[];
  /** Laws failing on the first failing (unshrunk) case. */
  firstLaws: string[];
  /** The property whose run killed it (its space and the seed/path replay it). */
  property: string | null;
  requests: number | null;
  promptTokens: number | null;
  rounds: number | null;
  /** Seconds to detect (first failure) plus shrinking. */
  seconds: number;
  detectSeconds: number;
  shrinkSeconds: number;
  runs: number;
  seed: number;
  path: string | null;
  replay: string | null;
  crashed: boolean;
}

export interface MutantsSummary {
  ok: boolean;
  seed: number;
  faults: FaultReport[];
}

/** `replay`: one recorded failure or case rerun; `laws` are its verdicts. */
export interface ReplaySummary {
  file: string;
  reproduced: boolean;
  exact: boolean;
  recordedLaws: string[];
  identicalTrace: boolean | null;
  crash: string | null;
  skipped: string | null;
  laws: LawVerdict[];
  /** An invariance failure: which of the case's run and its twin diverged from the reference (issue 25). */
  invariance?: InvarianceJudgement;
}

/** What the HTML reporter draws besides the summary: each failure's case, runs and tree (failure-view.ts). */
export interface ReportDetails {
  failures?: readonly FailureView[];
}

/** A command's report: which command, and its summary. */
export type Report = (
  | { command: "check"; summary: CheckSummary }
  | { command: "check --engine --golden"; summary: EngineCheckSummary }
  | { command: "validate"; summary: ValidationReport & { judged?: JudgedLaws } }
  | { command: "mutants"; summary: MutantsSummary }
  | { command: "replay"; summary: ReplaySummary; text: ReplayText }
) &
  ReportDetails;

/** What replay's text shows besides the verdicts: the case, its step tables, the recorded failure. */
export interface ReplayText {
  /** The header, the case and the step tables (failures/step-table.ts, failures/side-by-side.ts). */
  lines: string[];
  /** For a failure record: the violation it recorded. */
  recordedViolation?: string;
}
