// The space generated cases are drawn from. Every law's property narrows it to its own corner (a
// chunk size that leaves a tail, page sizes above 1, batches of two or more, ...); the shared checker
// still applies every law to every run. The first value of each list, and the low end of each range,
// is where shrinking goes: the tiny float32 preset, the mirror draft, S = 1, no chunking, page 1.
import type { FaultName } from "../../src/engine/faults.ts";
import type { DraftKind } from "../../src/model/spec.ts";
import { SAMPLING_OPTIONS } from "../../src/sampling/params.ts";
import type { SamplingSpace } from "./sampling.ts";

export interface IntRange {
  min: number;
  max: number;
}

export interface CaseSpace {
  /** Model presets (both dtypes); the first is the shrink target. */
  presets: readonly string[];
  drafts: readonly DraftKind[];
  /** S: draft steps per round. */
  steps: IntRange;
  /** K: tree width (1: chain). N is drawn within the valid range for S and K. */
  topks: readonly number[];
  /** Multi-layer (MTP-style) drafting, where it can run (topk 1, a mirror-family draft); the first value shrinks. */
  multiLayer: readonly boolean[];
  /** Draft decode on captured, replayed graphs. */
  graphReplay: readonly boolean[];
  /** Prefill chunk size: `none` allows null (unchunked), which is then the shrink target; `noneOnly`: always null. */
  chunk: IntRange & { none: boolean; noneOnly?: boolean };
  pages: IntRange;
  /** Prefill token budget per step: `unlimited` allows 256 (effectively none), then the shrink target; `unlimitedOnly`: always. */
  budget: IntRange & { unlimited: boolean; unlimitedOnly?: boolean };
  requests: IntRange;
  /** Prompt suffix length after the preset's preamble (BOS + fixed tokens). */
  suffix: IntRange;
  maxNewTokens: IntRange;
  /** Latest arrival step. */
  maxArrival: number;
  /** Most aborts per case (0: none). */
  maxAborts: number;
  /** Retracts per case (the request resumes by re-prefilling). */
  retracts: IntRange;
  /** Request sampling options (stop ids, min tokens, penalties, bias, logprobs) drawn per request. */
  sampling: SamplingSpace;
  /** Each drawn request repeated this many times with distinct sampling seeds (the sampling distribution law's samples). */
  replicas?: IntRange;
  /** Faults switched on in every generated case (mutants). */
  faults: readonly FaultName[];
  /** The engine mode of every case (default speculative; an engine that only decodes target-only gets those). */
  mode?: "speculative" | "target-only";
}

export const PROPERTY_PRESETS = ["tiny", "tiny-f64", "small-gqa", "small-mha"] as const;
export const PROPERTY_DRAFTS: readonly DraftKind[] = [
  "mirror",
  "tapped-mirror",
  "noisy-mirror",
  "eagle",
  "truncated-mirror",
  "eagle3-mirror",
  "eagle3",
];

/** The whole space: what the coverage suite and `specconf check`'s mixed runs draw from. */
export const FULL_SPACE: CaseSpace = {
  presets: PROPERTY_PRESETS,
  drafts: PROPERTY_DRAFTS,
  steps: { min: 1, max: 5 },
  topks: [1, 2, 4],
  multiLayer: [false, true],
  graphReplay: [false, true],
  chunk: { none: true, min: 1, max: 8 },
  pages: { min: 1, max: 4 },
  budget: { unlimited: true, min: 1, max: 16 },
  requests: { min: 1, max: 3 },
  suffix: { min: 1, max: 10 },
  maxNewTokens: { min: 1, max: 10 },
  maxArrival: 3,
  maxAborts: 1,
  retracts: { min: 0, max: 1 },
  sampling: { options: SAMPLING_OPTIONS },
  faults: [],
};

/** A narrower space: the overrides replace whole fields. */
export function space(overrides: Partial<CaseSpace> = {}): CaseSpace {
  return { ...FULL_SPACE, ...overrides };
}

/** Checks a space is generable (ranges non-empty, lists non-empty); throws naming the field. */
export function checkSpace(s: CaseSpace): void {
  const ranges: (keyof CaseSpace)[] = [
    "steps",
    "chunk",
    "pages",
    "budget",
    "requests",
    "suffix",
    "maxNewTokens",
    "retracts",
  ];
  for (const key of ranges) {
    const range = s[key] as IntRange;
    if (!Number.isInteger(range.min) || !Number.isInteger(range.max) || range.min > range.max)
      throw new Error(`case space: ${key} must be a range with min <= max`);
  }
  if (
    s.steps.min < 1 ||
    s.chunk.min < 1 ||
    s.budget.min < 1 ||
    s.pages.min < 1 ||
    s.requests.min < 1 ||
    s.suffix.min < 0 ||
    s.maxNewTokens.min < 1 ||
    s.retracts.min < 0
  )
    throw new Error("case space: a range starts below its minimum");
  for (const key of ["presets", "drafts", "topks", "multiLayer", "graphReplay"] as const)
    if (s[key].length === 0) throw new Error(`case space: ${key} is empty`);
  const missing = (s.sampling.required ?? []).find((option) => !s.sampling.options.includes(option));
  if (missing) throw new Error(`case space: sampling option ${missing} is required but not among the options`);
  if (s.sampling.always && s.sampling.options.length === 0)
    throw new Error("case space: sampling is always drawn but no option is allowed");
}
