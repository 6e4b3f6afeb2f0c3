// Case dimensions that only some spaces draw (grammars, speculation schedules, the context boundary, slot
// reuse, the text layer, the context gathered on the CPU EP, EAGLE-3 checkpoints' own aux layers), and what
// depends on them. A dimension such as grammars is off in the mixed space and the older laws' spaces, so that
// their draws (and the checked-in kills replaying them) stay as they were; only the properties focused on it
// draw it. So `specconf mutants` hunts a fault of that dimension with those properties only, and a coverage
// label of that dimension is judged over the runs of spaces that draw it (a run from another space could never
// reach it).
import type { FaultName } from "../case/faults.ts";
import { getPreset } from "../model/presets.ts";
import { GRAMMAR_COVERAGE_LABELS } from "../check/grammar-coverage.ts";
import { SCHEDULE_COVERAGE_LABELS } from "../check/schedule-coverage.ts";
import { CONTEXT_COVERAGE_LABELS } from "../check/context-coverage.ts";
import { SLOT_COVERAGE_LABELS } from "../check/slot-coverage.ts";
import { TEXT_COVERAGE_LABELS } from "../check/text-coverage.ts";
import type { CoverageLabel } from "../check/coverage.ts";
import { AUX_LAYER_COVERAGE_LABELS, GATHER_COVERAGE_LABELS } from "../check/case-coverage.ts";
import type { CaseSpace } from "./arbitraries/space.ts";
import type { LawProperty } from "./law-property.ts";

type SpaceTest = (space: Omit<CaseSpace, "faults">) => boolean;

const drawsGrammars: SpaceTest = (space) => space.grammar === true && space.sampling.options.includes("grammar");
const drawsSchedules: SpaceTest = (space) => space.draftSchedule === true;
/** Hybrid models (recurrent layers) are drawn only by the spaces naming their presets. */
const drawsHybrids: SpaceTest = (space) => space.presets.some((name) => getPreset(name).recurrent !== undefined);
const drawsContextBoundary: SpaceTest = (space) => space.contextBoundary === true;
const drawsSlotReuse: SpaceTest = (space) => space.slotReuse === true;
const drawsText: SpaceTest = (space) => space.text === true && space.sampling.options.includes("stop");
const drawsGather: SpaceTest = (space) => space.gatherContext?.includes(true) === true;
const drawsAuxLayers: SpaceTest = (space) =>
  space.auxLayerCounts !== undefined && space.drafts.some((kind) => kind === "eagle3" || kind === "eagle3-mirror");

/** Faults only cases of a dimension can show. */
const FAULT_DIMENSIONS: Partial<Record<FaultName, SpaceTest>> = {
  "grammar-advanced-by-rejected-drafts": drawsGrammars,
  "draft-kv-not-caught-up": drawsSchedules,
  "recurrent-state-wrong-slot": drawsHybrids,
  "recurrent-rejected-drafts-kept": drawsHybrids,
  "recurrent-zero-accepted-wraps": drawsHybrids,
  "prefix-cache-latest-recurrent-state": drawsHybrids,
  "lookahead-past-limit": drawsContextBoundary,
  "drafter-state-kept-on-slot-reuse": drawsSlotReuse,
  "stop-string-checked-at-round-end": drawsText,
  "stream-delta-last-token": drawsText,
  "usage-counts-verified-run": drawsText,
  "stop-strings-by-list-order": drawsText,
  "held-text-dropped-on-abort": drawsText,
};

/** Coverage labels only cases of a dimension can reach. */
const LABEL_DIMENSIONS: [readonly CoverageLabel[], SpaceTest][] = [
  [GRAMMAR_COVERAGE_LABELS, drawsGrammars],
  [SCHEDULE_COVERAGE_LABELS, drawsSchedules],
  [CONTEXT_COVERAGE_LABELS, drawsContextBoundary],
  [SLOT_COVERAGE_LABELS, drawsSlotReuse],
  [TEXT_COVERAGE_LABELS, drawsText],
  [GATHER_COVERAGE_LABELS, drawsGather],
  [AUX_LAYER_COVERAGE_LABELS, drawsAuxLayers],
];

/**
 * The properties to hunt a fault with: for a fault of a dimension, those of `schedule` (the mixed property,
 * then every law's) that draw it (no other case can show the fault); every one for any other fault.
 */
export function huntSchedule(fault: FaultName, schedule: readonly LawProperty[]): LawProperty[] {
  const reaches = FAULT_DIMENSIONS[fault];
  return reaches ? schedule.filter((property) => reaches(property.space)) : [...schedule];
}

/** The labels a space cannot reach: a dimension it does not draw. */
export function labelsOutside(space: Omit<CaseSpace, "faults">): CoverageLabel[] {
  return LABEL_DIMENSIONS.flatMap(([labels, reaches]) => (reaches(space) ? [] : [...labels]));
}

/** The labels of the dimensions a space draws: its property must reach them (properties/vitest-law.ts). */
export function dimensionLabels(space: Omit<CaseSpace, "faults">): CoverageLabel[] {
  return LABEL_DIMENSIONS.flatMap(([labels, reaches]) => (reaches(space) ? [...labels] : []));
}
