// The resource-limit flags of the commands that run cases from files (run, replay): each raises one limit
// of src/case/limits.ts for a user who needs more. Threads are raised by `run --threads` itself.
import { DEFAULT_LIMITS, type ResourceLimits } from "../case/limits.ts";
import { defineFlags } from "./args.ts";

export const LIMIT_FLAG_SPECS = defineFlags({
  "max-requests": {
    type: "integer",
    min: 1,
    default: DEFAULT_LIMITS.maxRequests,
    description: "refuse a case with more requests",
  },
  "max-total-tokens": {
    type: "integer",
    min: 1,
    default: DEFAULT_LIMITS.maxTotalTokens,
    description: "refuse a case with more prompt and new tokens in all (or more aborts and retracts)",
  },
  "max-parameters": {
    type: "integer",
    min: 1,
    default: DEFAULT_LIMITS.maxParameters,
    description: "refuse models with more parameters in all (target and draft graphs; ~12 bytes each in memory)",
  },
});

export function limitsFrom(values: {
  "max-requests": number;
  "max-total-tokens": number;
  "max-parameters": number;
}): ResourceLimits {
  return {
    ...DEFAULT_LIMITS,
    maxRequests: values["max-requests"],
    maxTotalTokens: values["max-total-tokens"],
    maxParameters: values["max-parameters"],
  };
}
