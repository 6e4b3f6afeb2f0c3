// Every law the harness knows: a plain list of the law files' definitions (definition.ts). The order is
// the order of reports. A new law is one file exporting `law` plus one line here; nothing else in src/
// names it. Its property suite is one more file and one line (docs/laws.md, "Adding a law").
import type { Law } from "./definition.ts";
import { law as referenceDecode } from "./reference-decode.ts";
import { law as lossless } from "./lossless.ts";
import { law as terminationEquivalence } from "./termination-equivalence.ts";
import { law as processingParity } from "./processing-parity.ts";
import { law as logprobParity } from "./logprob-parity.ts";
import { law as samplingReplay } from "./sampling-replay.ts";
import { law as samplingDistribution } from "./sampling-distribution.ts";
import { law as acceptanceCorrectness } from "./acceptance-correctness.ts";
import { law as draftReference } from "./draft-reference.ts";
import { law as mirrorAcceptance } from "./mirror-acceptance.ts";
import { law as positions } from "./positions.ts";
import { law as slidingWindow } from "./sliding-window.ts";
import { law as recurrentState } from "./recurrent-state.ts";
import { law as rowTokens } from "./row-tokens.ts";
import { law as phaseContracts } from "./phase-contracts.ts";
import { law as auxProvenance } from "./aux-provenance.ts";
import { law as draftVocabulary } from "./draft-vocabulary.ts";
import { law as bonusStride } from "./bonus-stride.ts";
import { law as treeSelection } from "./tree-selection.ts";
import { law as perStepPools } from "./per-step-pools.ts";
import { law as kvConservation } from "./kv-conservation.ts";
import { law as chunkInvariance } from "./chunk-invariance.ts";
import { law as pageSizeInvariance } from "./page-size-invariance.ts";
import { law as batchInvariance } from "./batch-invariance.ts";
import { law as replayEquivalence } from "./replay-equivalence.ts";
import { law as retractInvariance } from "./retract-invariance.ts";
import { law as retractResumes } from "./retract-resume.ts";
import { law as overlapInvariance } from "./overlap-invariance.ts";
import { law as prefixCacheInvariance } from "./prefix-cache-invariance.ts";
import { law as paddingInvariance } from "./padding-invariance.ts";
import { law as paddingPoisonInvariance } from "./padding-poison-invariance.ts";
import { law as contextGatherInvariance } from "./context-gather-invariance.ts";
import { law as placeholderResolution } from "./placeholder-resolution.ts";
import { law as prefixCacheDraftKv } from "./prefix-cache-draft-kv.ts";
import { law as abortFinality } from "./abort-finality.ts";
import { law as grammarAcceptance } from "./grammar-acceptance.ts";
import { law as grammarState } from "./grammar-state.ts";
import { law as draftSchedule } from "./draft-schedule.ts";
import { law as speculationEngaged } from "./speculation-engaged.ts";
import { law as contextLimit } from "./context-limit.ts";
import { law as slotHistory } from "./slot-history.ts";
import { law as streamDeltas } from "./stream-deltas.ts";
import { law as stopStringEnd } from "./stop-string-end.ts";
import { law as stopTrim } from "./stop-trim.ts";
import { law as usageCounts } from "./usage-counts.ts";

export const LAWS: readonly Law[] = [
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
  slidingWindow,
  recurrentState,
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
  batchInvariance,
  replayEquivalence,
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
  contextLimit,
  slotHistory,
  stopStringEnd,
  stopTrim,
  streamDeltas,
  usageCounts,
];

export const LAW_NAMES: readonly string[] = LAWS.map((law) => law.name);

/** Resolves a user-typed law name loosely: case, dashes, underscores and spaces do not matter. */
export function lawByName(name: string): Law | undefined {
  const normal = (text: string) =>
    text
      .trim()
      .toLowerCase()
      .replace(/[-_\s/]+/g, " ");
  return LAWS.find((law) => normal(law.name) === normal(name));
}
