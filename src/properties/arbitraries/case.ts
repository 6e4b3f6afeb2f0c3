// Generated cases: one fc.record over model, draft, engine and workload draws, mapped to a Case. The
// Case is the same format `specconf run --case` reads, so every counterexample is a replayable file.
import fc from "fast-check";
import { CASE_FORMAT_VERSION, type Case } from "../../case/case.ts";
import { minimumPoolSlots } from "../../case/limits.ts";
import { getPreset } from "../../model/presets.ts";
import { isEagle3 } from "../../model/spec.ts";
import { engineChoiceArbitrary, engineConfigOf, type EngineChoice } from "./engine.ts";
import { draftArbitrary, presetArbitrary } from "./model.ts";
import { checkSpace, type CaseSpace } from "./space.ts";
import { ORACLE_PRESET } from "./eagle3-oracle.ts";
import { auxLayersArbitrary, withAuxLayers } from "./aux-layers.ts";
import { isVariant, specVariant, specVariantArbitrary, type SpecVariantDraw } from "./spec-variants.ts";
import { atContextBoundary, contextDrawArbitrary, type ContextDraw } from "./context.ts";
import {
  abortsArbitrary,
  abortsOf,
  requestsArbitrary,
  replicate,
  requestsOf,
  retractsArbitrary,
  type AbortDraw,
  type RequestDraw,
} from "./workload.ts";

export interface CaseDraw {
  preset: string;
  draft: Case["draft"];
  engine: EngineChoice;
  requests: RequestDraw[];
  aborts: AbortDraw[];
  retracts: AbortDraw[];
  /** Copies of each request (replicas; 1 without). */
  copies: number;
  /** Spaces at the context boundary only (absent elsewhere, so their draws stay as they were). */
  context?: ContextDraw;
  /** Spaces reusing request slots only: engine.requestSlots. */
  requestSlots?: number;
  /** Spaces with EAGLE-3 drafts only: the checkpoint's raw layer ids (undefined: the default set). */
  auxLayers?: number[] | undefined;
  /** Spaces that gather the context on the CPU EP only: engine.runtime.gatherContext. */
  gatherContext?: boolean;
  /** Spaces drawing model spec variants only (arbitraries/spec-variants.ts): the case then carries its spec. */
  specVariant?: SpecVariantDraw;
}

export function caseDrawArbitrary(s: CaseSpace): fc.Arbitrary<CaseDraw> {
  checkSpace(s);
  return fc.record({
    preset: presetArbitrary(s.presets),
    draft: draftArbitrary(s.drafts, s.draftWeights, s.eagle3Oracle),
    engine: engineChoiceArbitrary(s),
    requests: requestsArbitrary(s),
    aborts: abortsArbitrary(s),
    retracts: retractsArbitrary(s),
    copies: s.replicas ? fc.integer(s.replicas) : fc.constant(1),
    ...(s.contextBoundary ? { context: contextDrawArbitrary } : {}),
    ...(s.slotReuse ? { requestSlots: fc.constant(1) } : {}),
    // Keys only in the spaces that draw them, so the others (and the checked-in kills) draw as they did.
    ...(s.auxLayerCounts && s.drafts.some(isEagle3) ? { auxLayers: auxLayersArbitrary(s.auxLayerCounts) } : {}),
    ...(s.gatherContext ? { gatherContext: fc.constantFrom(...s.gatherContext) } : {}),
    ...(s.specVariants ? { specVariant: specVariantArbitrary } : {}),
  });
}

/**
 * With the prefix cache, a tight pool is the smallest the case admits (one request's reservation): requests
 * wait for room and the cache evicts under pressure.
 */
export function caseOf(draw: CaseDraw, s: Pick<CaseSpace, "faults" | "mode" | "sampling">): Case {
  const roomy = roomyCaseOf(draw, s);
  const testCase = draw.context ? atContextBoundary(roomy, draw.context, draw.requests) : roomy;
  // Only a prefix cache makes use of the room left: without one a tight pool would only serialize requests.
  if (!draw.engine.tightPool || !draw.engine.prefixCache) return testCase;
  return { ...testCase, engine: { ...testCase.engine, poolSlots: minimumPoolSlots(testCase) } };
}

function roomyCaseOf(draw: CaseDraw, s: Pick<CaseSpace, "faults" | "mode" | "sampling">): Case {
  // The oracle drafts for its target family only: an oracle draw runs on the bigram preset.
  const preset = draw.draft?.oracle ? ORACLE_PRESET : draw.preset;
  const presetSpec = getPreset(preset);
  const variant = draw.specVariant && specVariant(presetSpec, draw.specVariant);
  // A variant that keeps every value names the preset, so shrinking ends at the preset's own case.
  const spec = variant && isVariant(presetSpec, variant) ? variant : presetSpec;
  const engine = engineConfigOf(draw.engine, s.faults, draw.draft?.kind);
  const requests = replicate(requestsOf(spec, draw.requests, s.sampling, engine.numSteps), draw.copies);
  // 256 pages hold 3 requests of the space; replicas scale the pools with them.
  engine.poolSlots *= Math.ceil(requests.length / 3);
  return {
    formatVersion: CASE_FORMAT_VERSION,
    model: spec === presetSpec ? { preset } : { spec: { ...spec, name: `${preset} (variant)` } },
    // The oracle is built for its own layer ids (the bigram preset's defaults): drawn ids are for other heads.
    draft: draw.draft?.oracle ? draw.draft : withAuxLayers(draw.draft, draw.auxLayers, spec),
    engine: {
      ...engine,
      mode: s.mode ?? "speculative",
      ...(draw.requestSlots !== undefined ? { requestSlots: draw.requestSlots } : {}),
      ...(draw.gatherContext ? { runtime: { ...engine.runtime, gatherContext: true } } : {}),
    },
    workload: {
      requests,
      aborts: abortsOf(draw.aborts, draw.requests.length),
      ...(draw.retracts.length > 0 ? { retracts: abortsOf(draw.retracts, draw.requests.length) } : {}),
    },
  };
}

/** Cases over a space. Shrinks through the draw (map without an unmapper: fast-check keeps the source). */
export function caseArbitrary(s: CaseSpace): fc.Arbitrary<Case> {
  return caseDrawArbitrary(s).map((draw) => caseOf(draw, s));
}
