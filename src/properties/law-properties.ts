// Every law's property, in the order `specconf check` runs and reports them, plus the mixed property
// over the whole space (coverage, mutants).
import { LAW_NAMES } from "../laws/registry.ts";
import { FULL_SPACE } from "./arbitraries/space.ts";
import type { LawProperty } from "./law-property.ts";
import acceptanceCorrectness from "./laws/acceptance-correctness.ts";
import auxProvenance from "./laws/aux-provenance.ts";
import batchInvariance from "./laws/batch-invariance.ts";
import bonusStride from "./laws/bonus-stride.ts";
import chunkInvariance from "./laws/chunk-invariance.ts";
import draftReference from "./laws/draft-reference.ts";
import draftVocabulary from "./laws/draft-vocabulary.ts";
import kvConservation from "./laws/kv-conservation.ts";
import lossless from "./laws/lossless.ts";
import logprobParity from "./laws/logprob-parity.ts";
import processingParity from "./laws/processing-parity.ts";
import terminationEquivalence from "./laws/termination-equivalence.ts";
import samplingReplay from "./laws/sampling-replay.ts";
import samplingDistribution from "./laws/sampling-distribution.ts";
import mirrorAcceptance from "./laws/mirror-acceptance.ts";
import pageSizeInvariance from "./laws/page-size-invariance.ts";
import perStepPools from "./laws/per-step-pools.ts";
import replayEquivalence from "./laws/replay-equivalence.ts";
import retractInvariance from "./laws/retract-invariance.ts";
import retractResumes from "./laws/retract-resume.ts";
import phaseContracts from "./laws/phase-contracts.ts";
import positions from "./laws/positions.ts";
import slidingWindow from "./laws/sliding-window.ts";
import recurrentState from "./laws/recurrent-state.ts";
import referenceDecode from "./laws/reference-decode.ts";
import rowTokens from "./laws/row-tokens.ts";
import treeSelection from "./laws/tree-selection.ts";
import overlapInvariance from "./laws/overlap-invariance.ts";
import prefixCacheInvariance from "./laws/prefix-cache-invariance.ts";
import paddingInvariance from "./laws/padding-invariance.ts";
import paddingPoisonInvariance from "./laws/padding-poison-invariance.ts";
import contextGatherInvariance from "./laws/context-gather-invariance.ts";
import placeholderResolution from "./laws/placeholder-resolution.ts";
import prefixCacheDraftKv from "./laws/prefix-cache-draft-kv.ts";
import abortFinality from "./laws/abort-finality.ts";
import grammarAcceptance from "./laws/grammar-acceptance.ts";
import grammarState from "./laws/grammar-state.ts";
import draftSchedule from "./laws/draft-schedule.ts";
import speculationEngaged from "./laws/speculation-engaged.ts";
import contextLimit from "./laws/context-limit.ts";
import slotHistory from "./laws/slot-history.ts";
import stopStringEnd from "./laws/stop-string-end.ts";
import stopTrim from "./laws/stop-trim.ts";
import streamDeltas from "./laws/stream-deltas.ts";
import usageCounts from "./laws/usage-counts.ts";
import modelSpecVariants from "./laws/model-spec-variants.ts";
import familySpecVariants from "./laws/family-spec-variants.ts";
import { withEagle3Oracle } from "./arbitraries/eagle3-oracle.ts";

export const LAW_PROPERTIES: readonly LawProperty[] = [
  // First: the only property over the sliding-window and scaled-RoPE presets (the mixed space has none), so the
  // mutant search reaches those families' faults in its first round.
  slidingWindow,
  referenceDecode,
  lossless,
  terminationEquivalence,
  processingParity,
  logprobParity,
  samplingReplay,
  samplingDistribution,
  acceptanceCorrectness,
  draftReference,
  mirrorAcceptance,
  positions,
  rowTokens,
  phaseContracts,
  auxProvenance,
  draftVocabulary,
  bonusStride,
  treeSelection,
  perStepPools,
  kvConservation,
  chunkInvariance,
  pageSizeInvariance,
  replayEquivalence,
  batchInvariance,
  retractInvariance,
  retractResumes,
  overlapInvariance,
  prefixCacheInvariance,
  paddingInvariance,
  paddingPoisonInvariance,
  contextGatherInvariance,
  placeholderResolution,
  prefixCacheDraftKv,
  abortFinality,
  grammarAcceptance,
  grammarState,
  draftSchedule,
  speculationEngaged,
  // The only property over the hybrid presets; mutants hunts their faults with it alone (dimensions.ts).
  recurrentState,
  contextLimit,
  slotHistory,
  stopStringEnd,
  stopTrim,
  streamDeltas,
  usageCounts,
  // Keyed by what it draws, not by a law: the spec fields no preset varies (issue 34, item 7) are a dimension of
  // every law, not one law's corner. Last, so the mutant search's order over the others stays as it was.
  modelSpecVariants,
  familySpecVariants,
];

/** The whole space, every law: what the coverage suite and the mutant search run. */
export const MIXED: LawProperty = { law: "mixed", focus: "the whole case space", space: FULL_SPACE };

/** A property with its space on the EAGLE-3 oracle (check --eagle3-oracle), or as it is. */
export function oracleProperty(property: LawProperty, oracle: boolean | undefined): LawProperty {
  return oracle ? { ...property, space: withEagle3Oracle(property.space) } : property;
}

/** Properties keyed by a case dimension rather than a law (`check` runs them with every law's). */
export function dimensionProperties(): LawProperty[] {
  return LAW_PROPERTIES.filter((property) => !LAW_NAMES.includes(property.law));
}

export function propertyFor(law: string): LawProperty | undefined {
  return LAW_PROPERTIES.find((property) => property.law === law);
}

/** Laws of the registry without a property of their own (test/properties asserts there are none). */
export function lawsWithoutProperty(): string[] {
  return LAW_NAMES.filter((name) => !propertyFor(name));
}
