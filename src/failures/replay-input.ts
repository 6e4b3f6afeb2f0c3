// What `specconf replay FILE` accepts, read as untrusted input (a failure file shared in a bug report):
// a failure record (schema, known laws, sibling names that cannot leave the record's folder, a case the
// engine can run) or a bare case file; and the record's recorded trace, if present, which must be a
// regular file holding a valid trace. Every problem is a BadInputError naming the file and JSON path.
import { lstatSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Case } from "../case/case.ts";
import type { ResourceLimits } from "../case/limits.ts";
import { validateCase } from "../case/load.ts";
import { preflightCase } from "../case/preflight.ts";
import { readDocument } from "../golden/load.ts";
import { InputError, parseJsonText } from "../schema/input-error.ts";
import { parseTrace } from "../trace/load.ts";
import type { Trace } from "../trace/schema.ts";
import { validateFailureRecord, type FailureRecord } from "./failure-file.ts";

export type ReplayInput =
  { kind: "failure"; record: FailureRecord; file: string } | { kind: "case"; testCase: Case; file: string };

/** Reads a failure record or a bare case file and preflights its case (limits: the resource limits). */
export function loadReplayInput(file: string, limits?: ResourceLimits): ReplayInput {
  const data = parseJsonText(readDocument(file), file);
  if (typeof data === "object" && data !== null && (data as { kind?: unknown }).kind === "specconf-failure") {
    const issues = validateFailureRecord(data);
    if (issues.length > 0) throw InputError.fromIssues(file, issues);
    const record = data as FailureRecord;
    preflightCase(record.case, { limits, file, at: "/case" });
    return { kind: "failure", record, file };
  }
  const issues = validateCase(data);
  if (issues.length > 0) throw InputError.fromIssues(file, issues);
  preflightCase(data as Case, { limits, file });
  return { kind: "case", testCase: data as Case, file };
}

/** The record's trace file (in the record's folder, by validateFailureRecord), if it names one. */
export function traceFileOf(input: ReplayInput): string | undefined {
  return input.kind === "failure" && input.record.traceFile !== undefined
    ? join(dirname(input.file), input.record.traceFile)
    : undefined;
}

/** The recorded trace: undefined when the record names none or the file is gone; bad input when it is not a trace. */
export function readRecordedTrace(input: ReplayInput): Trace | undefined {
  return readSiblingTrace(input, traceFileOf(input), "/traceFile");
}

/** An invariance record's twin trace (failure-file.ts `twin`), read as the recorded trace is. */
export function readRecordedTwinTrace(input: ReplayInput): Trace | undefined {
  const name = input.kind === "failure" ? input.record.twin?.traceFile : undefined;
  return readSiblingTrace(input, name === undefined ? undefined : join(dirname(input.file), name), "/twin/traceFile");
}

function readSiblingTrace(input: ReplayInput, file: string | undefined, pointer: string): Trace | undefined {
  if (file === undefined) return undefined;
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined;
  }
  if (!stat.isFile())
    throw new InputError(file, undefined, `is not a regular file (named by ${input.file} ${pointer})`);
  return parseTrace(readDocument(file), file);
}
