// Coverage of case dimensions issue 34 (item 7) added so that no engine code path or checkpoint field is left
// unexercised: the GPU EPs' context gather run on the CPU EP (engine.runtime.gatherContext, src/runtime/
// context-gather.ts), and an EAGLE-3 checkpoint naming its own auxiliary layers rather than the default set.
// Read from the case alone; only the spaces drawing each dimension reach it (properties/dimensions.ts).
import type { Case } from "../case/case.ts";
import { isEagle3 } from "../model/spec.ts";

export const CASE_COVERAGE_LABELS = [
  /** The forwards were fed the context gathered on the host, on the CPU EP (the GPU EPs' feed). */
  "context gathered on the CPU EP",
  /** An EAGLE-3 draft whose checkpoint names its auxiliary layers (eagle_aux_hidden_state_layer_ids). */
  "EAGLE-3 checkpoint's own aux layers",
] as const;

export type CaseCoverageLabel = (typeof CASE_COVERAGE_LABELS)[number];

export const GATHER_COVERAGE_LABELS: readonly CaseCoverageLabel[] = ["context gathered on the CPU EP"];
export const AUX_LAYER_COVERAGE_LABELS: readonly CaseCoverageLabel[] = ["EAGLE-3 checkpoint's own aux layers"];

export function caseCoverageLabels(testCase: Readonly<Case>): CaseCoverageLabel[] {
  const labels: CaseCoverageLabel[] = [];
  if (testCase.engine.runtime.gatherContext === true) labels.push("context gathered on the CPU EP");
  if (testCase.draft && isEagle3(testCase.draft.kind) && testCase.draft.auxLayers !== undefined)
    labels.push("EAGLE-3 checkpoint's own aux layers");
  return labels;
}
