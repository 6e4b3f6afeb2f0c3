// Loading cases: read, parse, check formatVersion first (a newer file gets a clear message rather
// than a list of schema errors), then validate against CaseSchema. Every problem is an InputError.
import { CASE_FORMAT_VERSION, CaseSchema, type Case } from "./case.ts";
import { InputError, parseJsonText, readInputFile } from "../schema/input-error.ts";
import { formatVersionIssue, validateAgainst, type ValidationIssue } from "../schema/validator.ts";

/** Schema issues of a parsed case (formatVersion first); empty when it is a valid case. */
export function validateCase(data: unknown): ValidationIssue[] {
  const version = formatVersionIssue(data, "case", CASE_FORMAT_VERSION);
  if (version) return [version];
  const result = validateAgainst<Case>(CaseSchema, data, "case");
  return result.ok ? [] : result.errors;
}

/** Parses case JSON text; `fileLabel` names the input in error messages. */
export function parseCase(text: string, fileLabel: string): Case {
  const data = parseJsonText(text, fileLabel);
  const issues = validateCase(data);
  if (issues.length > 0) throw InputError.fromIssues(fileLabel, issues);
  return data as Case;
}

export function loadCaseFile(path: string): Case {
  return parseCase(readInputFile(path), path);
}
