// Loading traces (ours or a third party's): parse, check formatVersion first, then TraceSchema.
import { TRACE_FORMAT_VERSION, TraceSchema, type Trace } from "./schema.ts";
import { InputError, parseJsonText, readInputFile } from "../schema/input-error.ts";
import { formatVersionIssue, validateAgainst, type ValidationIssue } from "../schema/validator.ts";

/** Schema issues of a parsed trace (formatVersion first); empty when it is a valid trace. */
export function validateTrace(trace: unknown): ValidationIssue[] {
  const version = formatVersionIssue(trace, "trace", TRACE_FORMAT_VERSION);
  if (version) return [version];
  const result = validateAgainst<Trace>(TraceSchema, trace, "trace");
  return result.ok ? [] : result.errors;
}

/** Parses trace JSON text; `fileLabel` names the input in error messages. */
export function parseTrace(text: string, fileLabel: string): Trace {
  const data = parseJsonText(text, fileLabel);
  const issues = validateTrace(data);
  if (issues.length > 0) throw InputError.fromIssues(fileLabel, issues);
  return data as Trace;
}

export function loadTraceFile(path: string): Trace {
  return parseTrace(readInputFile(path), path);
}
