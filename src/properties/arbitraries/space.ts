// The space generated cases are drawn from. Every law's property narrows it to its own corner (a
// chunk size that leaves a tail, page sizes above 1, batches of two or more, ...); the shared checker
// still applies every law to every run. The first value of each list, and the low end of each range,
// is where shrinking goes: the tiny float32 preset, the mirror draft, S = 1, no chunking, page 1.
import type { FaultName } from "../../case/faults.ts";
import type { DraftKind } from "../../model/spec.ts";
import { SAMPLING_OPTIONS } from "../../sampling/params.ts";
import type { SamplingSpace } from "./sampling.ts";

export interface IntRange {
  min: number;
  max: number;
}

export interface CaseSpace {
  /** Model presets (both dtypes); the first is the shrink target. */
  presets: readonly string[];
  drafts: readonly DraftKind[];
  /** Relative weights of the drafts (default 1 each). */
  draftWeights?: Partial<Record<DraftKind, number>>;
  /** S: draft steps per round. */
  steps: IntRange;
  /** K: tree width (1: chain). N is drawn within the valid range for S and K. */
  topks: readonly number[];
  /** Multi-layer (MTP-style) drafting, where it can run (topk 1, a mirror-family draft); the first value shrinks. */
  multiLayer: readonly boolean[];
  /** Draft decode on captured, replayed graphs. */
  graphReplay: readonly boolean[];
  /**
   * Padded graph replay: graph replay on with row buckets (PADDED_BUCKETS), every decode-side forward on the
   * smallest bucket that holds it, its padding rows filled with poison.
   */
  padded: readonly boolean[];
  /** Overlap scheduling (engine.overlap): step t + 1 planned before step t's results are processed. */
  overlap: readonly boolean[];
  /** The prefix cache (engine.prefixCache): page-aligned shared prefixes reuse target and draft KV. */
  prefixCache: readonly boolean[];
  /**
   * With the prefix cache: the pool at the smallest size the workload admits (admission waits, the cache
   * evicts under pressure) instead of one no workload of the space fills.
   */
  tightPool: readonly boolean[];
  /**
   * EAGLE-3 drafts (eagle3, eagle3-mirror) draw the checkpoint's auxiliary layer ids, this many when they name them
   * (two draws in three; arbitraries/aux-layers.ts); absent: the default set always. llama.cpp's eagle3 GGUF takes
   * exactly 3 (narrowSpace). Drawn by the EAGLE-3 laws' spaces only, as dimensions.ts says why.
   */
  auxLayerCounts?: IntRange;
  /**
   * runtime.gatherContext drawn from this list: the context K/V rows fed gathered on the host, as on GPU EPs
   * (src/runtime/context-gather.ts), instead of the pool the CPU EP reads in place; the reference engine only
   * (narrowSpace). Absent: never (the spaces of the checked-in kills draw as they did).
   */
  gatherContext?: readonly boolean[];
  /**
   * Model spec variants (arbitraries/spec-variants.ts): the preset's RMSNorm epsilon, RoPE base, BOS and EOS ids,
   * Mamba2 conv kernel and YaRN original context drawn (the preset's own first), the case carrying its full spec.
   * Absent: the presets as they are (the spaces of the checked-in kills draw as they did).
   */
  specVariants?: boolean;
  /** Requests after the first copy up to this many leading suffix tokens from the first one (shared prefixes). */
  maxShared: number;
  /** Prefill chunk size: `none` allows null (unchunked), which is then the shrink target; `noneOnly`: always null. */
  chunk: IntRange & { none: boolean; noneOnly?: boolean };
  pages: IntRange;
  /** Prefill token budget per step: `unlimited` allows 256 (effectively none), then the shrink target; `unlimitedOnly`: always. */
  budget: IntRange & { unlimited: boolean; unlimitedOnly?: boolean };
  /** Requests per case; `shrinkTo`: shrinking may remove requests down to it (below min: arbitraries/removable-array.ts). */
  requests: IntRange & { shrinkTo?: number };
  /** Prompt suffix length after the preset's preamble (BOS + fixed tokens). */
  suffix: IntRange;
  maxNewTokens: IntRange;
  /** Latest arrival step. */
  maxArrival: number;
  /** Most aborts per case (0: none). */
  maxAborts: number;
  /** Fewest aborts per case (default 0). */
  minAborts?: number;
  /**
   * The steps aborts land in (default 0..4, as retracts): a space whose corner is an abort after a request has
   * emitted tokens draws later ones.
   */
  abortSteps?: IntRange;
  /** Retracts per case (the request resumes by re-prefilling). */
  retracts: IntRange;
  /** Request sampling options (stop ids, min tokens, penalties, bias, logprobs) drawn per request. */
  sampling: SamplingSpace;
  /**
   * Requests draw a speculation schedule (draft steps per round, 0 switching speculation off) four times in
   * five; chain drafting only (topk 1, no multi-layer, no overlap: src/engine/draft-schedule.ts).
   */
  draftSchedule?: boolean;
  /**
   * Cases driven to the context boundary (src/case/context-limit.ts): an engine context a few tokens past the
   * longest prompt, each request's prompt + output at it minus 0..S + 1, and a draft context shorter than the
   * target's half the time; chain drafting only (topk 1, no multi-layer, no overlap) and no prefix cache.
   */
  contextBoundary?: boolean;
  /**
   * Request slots reused in sequence (engine.requestSlots 1 or 2, src/engine/slot-drafter.ts): later requests
   * take a slot an earlier one held.
   */
  slotReuse?: boolean;
  /**
   * The text layer: requests are detokenized five times in six, with up to 3 stop strings cut from the text the
   * target writes (arbitraries/text.ts); "stop" must be a sampling option too.
   */
  text?: boolean;
  /**
   * With the text layer: a second stop string cut from the first, two draws in three (arbitraries/text.ts), so one
   * token often completes two stop strings.
   */
  overlappingStops?: boolean;
  /** Requests draw a grammar (src/sampling/grammar.ts) four times in five; "grammar" must be a sampling option too. */
  grammar?: boolean;
  /** Each drawn request repeated this many times with distinct sampling seeds (the sampling distribution law's samples). */
  replicas?: IntRange;
  /** Every EAGLE-3 head drawn is the oracle, on the bigram preset (arbitraries/eagle3-oracle.ts). */
  eagle3Oracle?: boolean;
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
/** The model drafts plus prompt lookup (0..S drafts per request and round, chains only). */
export const ALL_DRAFTS: readonly DraftKind[] = [...PROPERTY_DRAFTS, "ngram"];

/** The whole space: what the coverage suite and `specconf check`'s mixed runs draw from. */
export const FULL_SPACE: CaseSpace = {
  presets: PROPERTY_PRESETS,
  drafts: ALL_DRAFTS,
  // Prompt lookup's ragged rounds (a request with no draft next to one with S) need it in a batch: weighted
  // so that corner reaches its 2% in the mixed runs.
  draftWeights: { ngram: 5 },
  steps: { min: 1, max: 5 },
  topks: [1, 2, 4],
  multiLayer: [false, true],
  graphReplay: [false, true],
  // One case in four: padded cases also run graph-replay equivalence's eager twin and padding-poison
  // invariance's repoisoned twin (neither memoized: replayed forwards run on their own buffers).
  padded: [false, false, false, true],
  overlap: [false, true],
  prefixCache: [false, true],
  // Tight twice as often as roomy: eviction while a prefix is shared needs a tight pool, a prefix cache and
  // 2+ requests at once.
  tightPool: [false, true, true],
  maxShared: 10,
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
  if (!Number.isInteger(s.maxShared) || s.maxShared < 0)
    throw new Error("case space: maxShared must be an integer >= 0");
  for (const key of [
    "presets",
    "drafts",
    "topks",
    "multiLayer",
    "graphReplay",
    "padded",
    "overlap",
    "prefixCache",
    "tightPool",
  ] as const)
    if (s[key].length === 0) throw new Error(`case space: ${key} is empty`);
  if (s.auxLayerCounts && !(s.auxLayerCounts.min >= 1 && s.auxLayerCounts.min <= s.auxLayerCounts.max))
    throw new Error("case space: auxLayerCounts must be a range with 1 <= min <= max");
  if (s.gatherContext?.length === 0) throw new Error("case space: gatherContext is empty");
  const missing = (s.sampling.required ?? []).find((option) => !s.sampling.options.includes(option));
  if (missing) throw new Error(`case space: sampling option ${missing} is required but not among the options`);
  if (s.sampling.always && s.sampling.options.length === 0)
    throw new Error("case space: sampling is always drawn but no option is allowed");
}
