// Reading golden files: size check, JSON, formatVersion, schema, then what the schema cannot say
// (cases agree with the suite's models, expectations match workloads) and, last, the digests: the
// spec must still build the exact ONNX bytes the golden file names. Every problem is an InputError.
import { statSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { checkResourceLimits } from "../case/limits.ts";
import { ConfigError } from "../case/engine-config.ts";
import { checkCaseConsistency } from "../case/consistency.ts";
import { buildDraft, buildTarget } from "../model/build.ts";
import { isEagle3 } from "../model/spec.ts";
import { SpecError, validateModelSpec } from "../model/spec.ts";
import { InputError, parseJsonText, readInputFile } from "../schema/input-error.ts";
import { formatVersionIssue, validateAgainst, type ValidationIssue } from "../schema/validator.ts";
import { GOLDEN_FORMAT_VERSION, GoldenSchema, type Golden } from "./schema.ts";

/** JSON documents (golden files, traces) above this size are refused before reading. */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

/** Reads a whole JSON document, refusing huge files with a clear message instead of running out of memory. */
export function readDocument(path: string, maxBytes = MAX_DOCUMENT_BYTES): string {
  let size: number | undefined;
  try {
    size = statSync(path).size;
  } catch {
    // readInputFile reports missing / unreadable files.
  }
  if (size !== undefined && size > maxBytes) {
    throw new InputError(
      path,
      undefined,
      `file is ${size} bytes, larger than the ${maxBytes}-byte limit for a JSON document (outputs go in JSON Lines, which is streamed)`,
    );
  }
  return readInputFile(path);
}

export function validateGoldenDocument(data: unknown): ValidationIssue[] {
  const version = formatVersionIssue(data, "golden", GOLDEN_FORMAT_VERSION);
  if (version) return [version];
  const result = validateAgainst<Golden>(GoldenSchema, data, "golden");
  if (!result.ok) return result.errors;
  return consistencyIssues(result.value);
}

/** Checks the schema cannot express; issues carry JSON pointers into the golden file. */
export function consistencyIssues(golden: Golden): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  try {
    validateModelSpec(golden.models.target.spec);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return [{ path: `/models/target/spec/${err.field}`, message: err.reason }];
  }
  const names = new Set<string>();
  golden.cases.forEach((goldenCase, c) => {
    const at = `/cases/${c}`;
    if (names.has(goldenCase.name))
      issues.push({ path: `${at}/name`, message: `duplicate case name '${goldenCase.name}'` });
    names.add(goldenCase.name);
    const model = goldenCase.case.model;
    if (!("spec" in model) || !isDeepStrictEqual(model.spec, golden.models.target.spec)) {
      issues.push({ path: `${at}/case/model`, message: "must be { spec } equal to /models/target/spec" });
    }
    if (!isDeepStrictEqual(goldenCase.case.draft, golden.models.draft?.spec ?? null))
      issues.push({ path: `${at}/case/draft`, message: "must equal /models/draft/spec" });
    if (goldenCase.case.engine.faults.length > 0)
      issues.push({ path: `${at}/case/engine/faults`, message: "golden cases run without faults" });
    try {
      // What the engine can run at all, and the resource limits: nothing is built from a golden file beyond them.
      checkCaseConsistency(goldenCase.case, golden.models.target.spec);
      checkResourceLimits(goldenCase.case, golden.models.target.spec);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push({ path: `${at}/case${err.field}`, message: err.detail });
    }
    const workload = goldenCase.case.workload.requests;
    const expected = goldenCase.expected.requests;
    const ids = new Set<number>();
    workload.forEach((request, r) => {
      if (ids.has(request.id))
        issues.push({ path: `${at}/case/workload/requests/${r}/id`, message: `duplicate request id ${request.id}` });
      ids.add(request.id);
    });
    if (expected.length !== workload.length)
      issues.push({
        path: `${at}/expected/requests`,
        message: `has ${expected.length} entries for ${workload.length} workload requests`,
      });
    expected.forEach((request, r) => {
      const here = `${at}/expected/requests/${r}`;
      const input = workload[r];
      if (!input || input.id !== request.id)
        issues.push({ path: `${here}/id`, message: `must be ${input?.id ?? "absent"} (the workload's request ${r})` });
      if (request.margins.length !== request.tokens.length)
        issues.push({
          path: `${here}/margins`,
          message: `has ${request.margins.length} entries for ${request.tokens.length} tokens`,
        });
      if (input && request.tokens.length > input.maxNewTokens)
        issues.push({ path: `${here}/tokens`, message: `has more than maxNewTokens (${input.maxNewTokens}) tokens` });
      const asksLogprobs = input?.sampling?.logprobs !== undefined;
      if (asksLogprobs !== (request.logprobs !== undefined))
        issues.push({
          path: `${here}/logprobs`,
          message: asksLogprobs
            ? "is missing: the request asks for logprobs"
            : "is present for a request without logprobs",
        });
      if (request.logprobs && request.logprobs.length !== request.tokens.length)
        issues.push({
          path: `${here}/logprobs`,
          message: `has ${request.logprobs.length} entries for ${request.tokens.length} tokens`,
        });
      if ((request.finishReason === "stop") !== (request.stopTokenId !== undefined))
        issues.push({ path: `${here}/stopTokenId`, message: "must be present exactly when the finish reason is stop" });
      request.rounds.forEach((round, k) => {
        if (round.draftMargins.length !== round.drafts.length)
          issues.push({
            path: `${here}/rounds/${k}/draftMargins`,
            message: `has ${round.draftMargins.length} entries for ${round.drafts.length} drafts`,
          });
        if (round.acceptLen > round.drafts.length + 1)
          issues.push({
            path: `${here}/rounds/${k}/acceptLen`,
            message: `exceeds ${round.drafts.length + 1} (drafts + 1)`,
          });
      });
    });
  });
  return issues;
}

/** Rebuilds the models from their specs and compares digests; a mismatch means a generator changed. */
export function digestIssues(golden: Golden): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  // EAGLE-3 drafts read the target's layer streams: their suites name the target graph that outputs them.
  const target = buildTarget(golden.models.target.spec, isEagle3(golden.models.draft?.spec.kind));
  const hint = "the models were generated by another specconf version: run `specconf golden update`";
  if (target.graph.digest !== golden.models.target.digest) {
    issues.push({
      path: "/models/target/digest",
      message: `is ${golden.models.target.digest.slice(0, 12)}..., but the spec builds ${target.graph.digest.slice(0, 12)}... (${hint})`,
    });
  }
  const draftModel = golden.models.draft;
  if (draftModel) {
    const draft = buildDraft(target, draftModel.spec);
    if (draft.graphs[0].digest !== draftModel.digest) {
      issues.push({
        path: "/models/draft/digest",
        message: `is ${draftModel.digest.slice(0, 12)}..., but the spec builds ${draft.graphs[0].digest.slice(0, 12)}... (${hint})`,
      });
    }
  }
  return issues;
}

/** Parses and fully checks golden text (digests included); `fileLabel` names it in errors. */
export function parseGolden(text: string, fileLabel: string): Golden {
  const data = parseJsonText(text, fileLabel);
  const issues = validateGoldenDocument(data);
  if (issues.length > 0) throw InputError.fromIssues(fileLabel, issues);
  const golden = data as Golden;
  const digests = digestIssues(golden);
  if (digests.length > 0) throw InputError.fromIssues(fileLabel, digests);
  return golden;
}

export function loadGoldenFile(path: string): Golden {
  return parseGolden(readDocument(path), path);
}
