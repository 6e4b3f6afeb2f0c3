// Shrunk failures on disk: `.specconf/failures/<law>-<seed>.json` (the record: law, violation, seed,
// path and the whole case, so `specconf replay FILE` needs nothing else), next to it the case alone
// (`.case.json`, for `specconf run --case`) and the case's trace (`.trace.json`). Everything is
// schema-validated before it is written, and written atomically.
import { Type, type Static } from "@sinclair/typebox";
import { dirname, join, relative } from "node:path";
import { CaseSchema, type Case } from "../case/case.ts";
import { validateCase } from "../case/load.ts";
import { writeJsonAtomic } from "../schema/atomic-write.ts";
import { InputError, parseJsonText, readInputFile } from "../schema/input-error.ts";
import { formatVersionIssue, validateAgainst, type ValidationIssue } from "../schema/validator.ts";
import { validateTrace } from "../trace/load.ts";
import type { Trace } from "../trace/schema.ts";

export const FAILURE_FORMAT_VERSION = 1;
export const DEFAULT_FAILURE_DIR = ".specconf/failures";

const ViolationSchema = Type.Object(
  {
    message: Type.String(),
    request: Type.Optional(Type.Integer()),
    event: Type.Optional(Type.Integer()),
    index: Type.Optional(Type.Integer()),
    expected: Type.Optional(Type.Number()),
    got: Type.Optional(Type.Number()),
    margin: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const FailureRecordSchema = Type.Object(
  {
    formatVersion: Type.Literal(FAILURE_FORMAT_VERSION),
    kind: Type.Literal("specconf-failure"),
    /** The property (named after the law it focuses on) whose run failed. */
    property: Type.String(),
    /** Laws that fail on the shrunk case, first one first. */
    laws: Type.Array(Type.String(), { minItems: 1 }),
    violation: ViolationSchema,
    /** fast-check seed and counterexample path: `fc.check(property, { seed, path, endOnFailure: true })`. */
    seed: Type.Integer(),
    path: Type.String(),
    faults: Type.Array(Type.String()),
    case: CaseSchema,
    /** Sibling files, relative to this one (no trace when the run itself failed). */
    caseFile: Type.String(),
    traceFile: Type.Optional(Type.String()),
    /** The external engine the failure was found on (`specconf check --engine`); replay reruns it there. */
    engine: Type.Optional(
      Type.Object({ command: Type.String(), name: Type.String() }, { additionalProperties: false }),
    ),
    /** The reference engine's trace of the same case, for the side-by-side replay (external engines only). */
    referenceTraceFile: Type.Optional(Type.String()),
    replay: Type.String(),
  },
  { additionalProperties: false },
);

export type FailureRecord = Static<typeof FailureRecordSchema>;

export interface FailureInput {
  property: string;
  laws: string[];
  violation: FailureRecord["violation"];
  seed: number;
  path: string;
  testCase: Case;
  /** Absent when the run itself failed (crash, timeout, protocol error). */
  trace?: Trace;
  engine?: { command: string; name: string };
  /** The reference engine's trace of the case (external engines). */
  referenceTrace?: Trace;
}

export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

function issueText(what: string, issues: readonly ValidationIssue[]): string {
  return `${what} fails its schema: ${issues
    .slice(0, 3)
    .map((issue) => `${issue.path || "/"} ${issue.message}`)
    .join("; ")}`;
}

/** Writes the record, the case and the trace; returns the record's path and the one-line replay command. */
export function writeFailure(input: FailureInput, dir = DEFAULT_FAILURE_DIR): { file: string; replay: string } {
  const caseIssues = validateCase(input.testCase);
  if (caseIssues.length > 0) throw new Error(issueText("the shrunk case", caseIssues));
  for (const [what, trace] of [
    ["the shrunk case's trace", input.trace],
    ["the reference trace", input.referenceTrace],
  ] as const) {
    const traceIssues = trace ? validateTrace(trace) : [];
    if (traceIssues.length > 0) throw new Error(issueText(what, traceIssues));
  }
  const stem = `${slug(input.laws[0])}-${input.seed >>> 0}`;
  const file = join(dir, `${stem}.json`);
  const shown = relative(process.cwd(), file) || file;
  const replay = `npx specconf replay ${shown.includes(" ") ? JSON.stringify(shown) : shown}${input.engine ? ` --engine ${JSON.stringify(input.engine.command)}` : ""}`;
  const record: FailureRecord = {
    formatVersion: FAILURE_FORMAT_VERSION,
    kind: "specconf-failure",
    property: input.property,
    laws: input.laws,
    violation: stripUndefined(input.violation),
    seed: input.seed,
    path: input.path,
    faults: [...input.testCase.engine.faults],
    case: input.testCase,
    caseFile: `${stem}.case.json`,
    ...(input.trace ? { traceFile: `${stem}.trace.json` } : {}),
    ...(input.engine ? { engine: input.engine } : {}),
    ...(input.referenceTrace ? { referenceTraceFile: `${stem}.reference-trace.json` } : {}),
    replay,
  };
  const issues = validateFailureRecord(record);
  if (issues.length > 0) throw new Error(issueText("the failure record", issues));
  writeJsonAtomic(join(dir, record.caseFile), input.testCase);
  if (record.traceFile) writeJsonAtomic(join(dir, record.traceFile), input.trace);
  if (record.referenceTraceFile) writeJsonAtomic(join(dir, record.referenceTraceFile), input.referenceTrace);
  writeJsonAtomic(file, record);
  return { file, replay };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function validateFailureRecord(data: unknown): ValidationIssue[] {
  const version = formatVersionIssue(data, "failure record", FAILURE_FORMAT_VERSION);
  if (version) return [version];
  const result = validateAgainst<FailureRecord>(FailureRecordSchema, data, "failure record");
  return result.ok ? [] : result.errors;
}

export type ReplayInput =
  { kind: "failure"; record: FailureRecord; file: string } | { kind: "case"; testCase: Case; file: string };

/** Reads what `specconf replay` accepts: a failure record, or a bare case file. InputError on anything else. */
export function loadReplayInput(file: string): ReplayInput {
  const data = parseJsonText(readInputFile(file), file);
  if (typeof data === "object" && data !== null && (data as { kind?: unknown }).kind === "specconf-failure") {
    const issues = validateFailureRecord(data);
    if (issues.length > 0) throw InputError.fromIssues(file, issues);
    return { kind: "failure", record: data as FailureRecord, file };
  }
  const issues = validateCase(data);
  if (issues.length > 0) throw InputError.fromIssues(file, issues);
  return { kind: "case", testCase: data as Case, file };
}

/** The trace file next to a failure record. */
export function traceFileOf(input: ReplayInput): string | undefined {
  return input.kind === "failure" && input.record.traceFile
    ? join(dirname(input.file), input.record.traceFile)
    : undefined;
}
