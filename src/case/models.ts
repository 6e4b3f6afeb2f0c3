// A case's models: its model spec (a preset or an inline spec) and the graphs built from it for the target
// and the draft. Every engine, reference and exporter starts here. (Split out of engine/run-case.ts, issue
// 24: exporters and adapters need a case's models without the reference engine.)
import type { Case } from "./case.ts";
import { caseModelSpec } from "./limits.ts";
import { buildDraft, buildTarget, type DraftModel, type TargetModel } from "../model/build.ts";
import { getPreset } from "../model/presets.ts";
import { isEagle3, type ModelSpec } from "../model/spec.ts";

export interface LoadedModels {
  spec: ModelSpec;
  target: TargetModel;
  draft?: DraftModel;
}

/** The case's model spec; an unknown preset is a ConfigError at /model/preset. */
export function resolveModelSpec(modelRef: Case["model"]): ModelSpec {
  caseModelSpec(modelRef);
  return "preset" in modelRef ? getPreset(modelRef.preset) : modelRef.spec;
}

export function loadModels(testCase: Case): LoadedModels {
  const spec = resolveModelSpec(testCase.model);
  // EAGLE-3 drafts read the target's auxiliary states: its graph also outputs the residual streams.
  const target = buildTarget(spec, isEagle3(testCase.draft?.kind));
  const numModules =
    testCase.engine.mode === "speculative" && testCase.engine.multiLayer ? testCase.engine.numSteps : 1;
  const draft =
    testCase.draft && testCase.draft.kind !== "ngram" ? buildDraft(target, testCase.draft, numModules) : undefined;
  return { spec, target, draft };
}
