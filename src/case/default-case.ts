// The built-in default case of `specconf run`: a preset model and a handful of seeded prompts.
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { defaultEngineConfig, type EngineConfig } from "./engine-config.ts";
import { getPreset } from "../model/presets.ts";
import { defaultDraftSpec, type DraftKind } from "../model/spec.ts";
import { CASE_FORMAT_VERSION, type Case, type CaseRequest } from "./case.ts";

export interface DefaultCaseOptions {
  preset: string;
  draft: DraftKind;
  seed: number;
  numRequests: number;
  maxNewTokens: number;
  engine: Partial<EngineConfig>;
}

/**
 * Prompts are the spec's preamble (BOS first) followed by a seeded suffix of 1..16 tokens; requests
 * arrive over the first few steps so batches are ragged and mixed prefill/decode.
 */
export function generatePrompts(
  presetName: string,
  seed: number,
  numRequests: number,
  maxNewTokens: number,
): CaseRequest[] {
  const spec = getPreset(presetName);
  const rng = xoroshiro128plus(seed);
  const between = (lo: number, hi: number) => uniformInt(rng, lo, hi);
  return Array.from({ length: numRequests }, (_, id) => {
    const suffix = Array.from({ length: between(1, 16) }, () => between(3, spec.vocab - 1));
    return { id, prompt: [...spec.preamble, ...suffix], maxNewTokens, arrivalStep: between(0, 2) };
  });
}

export function defaultCase(options: DefaultCaseOptions): Case {
  return {
    formatVersion: CASE_FORMAT_VERSION,
    model: { preset: options.preset },
    draft: defaultDraftSpec(options.draft),
    engine: defaultEngineConfig(options.engine),
    workload: {
      requests: generatePrompts(options.preset, options.seed, options.numRequests, options.maxNewTokens),
      aborts: [],
    },
  };
}
