// Issue 25 item 8: an invariance law compares the case's run with a twin (unchunked, page size 1, alone in
// its batch, ...), and when the two disagree either may be the wrong one: a fault in unchunked prefill breaks
// the twin, not the case. So a failure shows both runs, and each is held against the teacher-forced
// target-only reference: its outputs (reference decode) and, when it speculates, its draft rows (draft
// reference). The run that differs from the reference is the one that diverged; the report marks it there.
import type { Case } from "../case/case.ts";
import type { CaseCheck } from "../check/runner.ts";
import { checkDraftReference } from "../laws/draft-reference.ts";
import { checkReferenceDecode } from "../laws/reference-decode.ts";
import { LAWS } from "../laws/registry.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import type { RunResult } from "../trace/run-result.ts";
import type { Trace } from "../trace/schema.ts";
import { stepTable, type StepTableOptions } from "./step-table.ts";

/** The twin run an invariance law compared the case's run with. */
export interface LawTwin {
  kind: string;
  /** In messages: "the unchunked run". */
  describe: string;
  testCase: Case;
  result: RunResult;
}

/** The twin a law of `check` was checked against (its own twin kind), when the law has one and it ran. */
export function twinOfLaw(check: Pick<CaseCheck, "twins">, law: string): LawTwin | undefined {
  const twin = LAWS.find((candidate) => candidate.name === law)?.needs.twin;
  const ran = twin && check.twins[twin.kind];
  return twin && ran
    ? { kind: twin.kind, describe: twin.describe, testCase: ran.testCase, result: ran.result }
    : undefined;
}

/** Where a run first differs from the reference. */
export interface Divergence {
  law: string;
  message: string;
  /** The event to mark in the run's step table, when one can be named. */
  event?: number;
}

/** Which of the two runs differ from the reference. */
export type Diverged = "the case's run" | "the twin" | "both" | "neither";

export interface InvarianceJudgement {
  law: string;
  twin: { kind: string; describe: string };
  run?: Divergence;
  twinRun?: Divergence;
  diverged: Diverged;
}

/** The last target forward of `request` with a row at `position` (its prediction became the output token there). */
function eventPredicting(trace: Trace, request: number, position: number): number | undefined {
  let found: number | undefined;
  for (const event of trace.events) {
    if (event.phase !== "prefill" && event.phase !== "decode" && event.phase !== "verify") continue;
    if (event.rows.some((row) => row.request === request && row.position === position)) found = event.index;
  }
  return found;
}

/** The first way a run differs from the teacher-forced reference, or undefined when it agrees (ties excused). */
export async function divergenceFromReference(
  testCase: Readonly<Case>,
  run: Readonly<Pick<RunResult, "trace">>,
  oracle: ReferenceOracle,
): Promise<Divergence | undefined> {
  const decode = await checkReferenceDecode(run.trace.requests, oracle, testCase);
  if (decode.status === "fails" && decode.violation) {
    const { request, index, message } = decode.violation;
    const prompt = run.trace.requests?.find((entry) => entry.id === request)?.prompt.length;
    const event =
      request !== undefined && index !== undefined && prompt !== undefined
        ? eventPredicting(run.trace, request, prompt - 1 + index)
        : undefined;
    return { law: decode.law, message, event };
  }
  if (testCase.engine.mode === "speculative" && testCase.draft?.kind !== "ngram") {
    const draft = await checkDraftReference(run.trace, oracle, testCase.draft?.kind);
    if (draft.status === "fails" && draft.violation)
      return { law: draft.law, message: draft.violation.message, event: draft.violation.event };
  }
  return undefined;
}

/** Holds both runs of a failing invariance law against the reference; undefined when the law has no twin run. */
export async function judgeInvariance(
  check: Pick<CaseCheck, "twins" | "run" | "testCase">,
  law: string,
  oracle: ReferenceOracle,
): Promise<InvarianceJudgement | undefined> {
  const twin = twinOfLaw(check, law);
  if (!twin || !check.run) return undefined;
  const run = await divergenceFromReference(check.testCase, check.run, oracle);
  const twinRun = await divergenceFromReference(twin.testCase, twin.result, oracle);
  const diverged: Diverged = run && twinRun ? "both" : run ? "the case's run" : twinRun ? "the twin" : "neither";
  return { law, twin: { kind: twin.kind, describe: twin.describe }, run, twinRun, diverged };
}

/**
 * The judgement of a failure record's two recorded runs (the case's trace and its twin's, from whichever engine
 * ran them: through the protocol, the twin is the engine's run too), as check reports it without rerunning.
 * Undefined when the record has no twin, or either trace is missing.
 */
export async function judgeRecordedRuns(
  law: string,
  testCase: Readonly<Case>,
  trace: Trace | undefined,
  twinTrace: Trace | undefined,
  oracle: ReferenceOracle,
): Promise<InvarianceJudgement | undefined> {
  const spec = LAWS.find((candidate) => candidate.name === law)?.needs.twin;
  if (!spec || !trace || !twinTrace) return undefined;
  const run = await divergenceFromReference(testCase, { trace }, oracle);
  const twinRun = await divergenceFromReference(spec.of(testCase), { trace: twinTrace }, oracle);
  const diverged: Diverged = run && twinRun ? "both" : run ? "the case's run" : twinRun ? "the twin" : "neither";
  return { law, twin: { kind: spec.kind, describe: spec.describe }, run, twinRun, diverged };
}

/** One line saying which run diverged from the reference (check's and replay's text, JUnit, the HTML report). */
export function judgementLine(judgement: InvarianceJudgement): string {
  const twin = judgement.twin.describe;
  const where = (divergence: Divergence) =>
    `${divergence.law}${divergence.event !== undefined ? ` at event ${divergence.event}` : ""}: ${divergence.message}`;
  switch (judgement.diverged) {
    case "the case's run":
      return `${judgement.law}: the case's run diverged from the reference (${where(judgement.run!)}); ${twin} agrees with it`;
    case "the twin":
      return `${judgement.law}: ${twin} diverged from the reference (${where(judgement.twinRun!)}); the case's run agrees with it`;
    case "both":
      return `${judgement.law}: both runs diverged from the reference: the case's run (${where(judgement.run!)}); ${twin} (${where(judgement.twinRun!)})`;
    case "neither":
      return `${judgement.law}: neither run diverges from the reference in outputs or draft predictions; they differ in what the law compares (positions, attention, rounds)`;
  }
}

type Mark = StepTableOptions["mark"];

function markAt(divergence: Divergence | undefined): Mark {
  return divergence?.event !== undefined
    ? { event: divergence.event, note: `diverges from the reference: ${divergence.law}: ${divergence.message}` }
    : undefined;
}

/**
 * The marks of both runs' step tables. The run that diverged from the reference is marked where it did; when
 * the failure shown is the judged law's, the case's run keeps `offenceMark` (the law's own event) only when
 * neither run diverged (then the law's difference is all there is to show).
 */
export function invarianceMarks(
  judgement: InvarianceJudgement,
  offenceLaw: string | undefined,
  offenceMark: Mark,
): { run: Mark; twin: Mark } {
  const ownOffence = offenceLaw === judgement.law;
  const run = ownOffence && judgement.diverged !== "neither" ? markAt(judgement.run) : offenceMark;
  return { run, twin: markAt(judgement.twinRun) };
}

/** The twin's step table under a heading naming it (empty when the twin did not run). */
export function twinStepTable(
  check: Pick<CaseCheck, "twins">,
  judgement: InvarianceJudgement,
  options: StepTableOptions,
): string[] {
  const twin = twinOfLaw(check, judgement.law);
  if (!twin) return [];
  const trace = twin.result.trace;
  return [
    `${twin.describe} (the twin ${judgement.law} compared with):`,
    trace.events.length > 0 ? stepTable(trace, options) : "(no trace events)\n",
  ];
}
