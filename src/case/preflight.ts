// The one check every command runs on a case before it builds a model or a session: the model resolves
// (a known preset or a valid spec), the case is consistent and within what the reference engine can run
// (src/case/consistency.ts, src/case/limits.ts), and within the resource limits. A
// problem is a ConfigError naming the case's JSON path, and the file when the case came from one.
import type { Case } from "./case.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { checkCaseConsistency } from "./consistency.ts";
import { resolveModelSpec } from "./models.ts";
import type { ModelSpec } from "../model/spec.ts";
import { checkSizeLimits, checkWorkLimits, DEFAULT_LIMITS, type ResourceLimits } from "./limits.ts";

export interface PreflightOptions {
  limits?: ResourceLimits;
  /** The file the case came from (named in errors). */
  file?: string;
  /** Where the case sits in that file ("/case" in a failure record); errors' JSON paths start with it. */
  at?: string;
}

export function preflightCase(testCase: Case, options: PreflightOptions = {}): ModelSpec {
  try {
    const spec = resolveModelSpec(testCase.model);
    const limits = options.limits ?? DEFAULT_LIMITS;
    // The case's size first (a million requests is refused before anything walks them), then what the
    // engine can run, then the total work.
    checkSizeLimits(testCase, spec, limits);
    checkCaseConsistency(testCase, spec);
    checkWorkLimits(testCase, limits);
    return spec;
  } catch (error) {
    if (error instanceof BadInputError) {
      if (options.at) error.under(options.at);
      if (options.file) error.inFile(options.file);
    }
    throw error;
  }
}
