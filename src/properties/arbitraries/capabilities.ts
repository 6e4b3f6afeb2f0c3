// A case space narrowed to what an external engine declared in its handshake: generators draw only cases
// the engine can run (src/sources/capabilities.ts states the same rules over single cases; a test keeps the
// two in step). A law's focus that needs something the engine lacks cannot be generated: narrowSpace says
// why, and `check --engine` reports that law's property as not exercised.
import type { Capabilities } from "../../adapter/protocol.ts";
import { getPreset } from "../../model/presets.ts";
import { modelFamiliesOf, modelFamilyOutside } from "../../model/spec.ts";
import type { DraftKind } from "../../model/spec.ts";
import { eagle3GgufOnly, withDefaults } from "../../sources/capabilities.ts";
import { draftExportable, familyNotExportable } from "../../sources/model-cache.ts";
import { LLAMA_EAGLE3_AUX_LAYERS } from "../../export/gguf-eagle3.ts";
import { ALL_DRAFTS, PROPERTY_DRAFTS, type CaseSpace } from "./space.ts";

/** Drafts a generator may draw for an external engine: the property drafts plus prompt lookup (no model). */
const EXTERNAL_DRAFTS: readonly DraftKind[] = ALL_DRAFTS;

/** The largest run 1..max of consecutive page sizes the engine takes, starting at its smallest. */
function pageRange(pageSizes: readonly number[]): { min: number; max: number } {
  const sizes = new Set(pageSizes);
  const min = Math.min(...pageSizes);
  let max = min;
  while (sizes.has(max + 1)) max += 1;
  return { min, max };
}

/** The space within the capabilities, or why none of it is (a string). */
export function narrowSpace(space: CaseSpace, declared: Capabilities): CaseSpace | string {
  const capabilities = withDefaults(declared);
  const speculative = capabilities.modes.includes("speculative");
  let presets = space.presets.filter(
    (name) =>
      capabilities.dtypes.includes(getPreset(name).dtype) &&
      modelFamilyOutside(getPreset(name), capabilities.modelFamilies) === undefined &&
      familyNotExportable(getPreset(name), capabilities.modelFormats) === undefined,
  );
  if (presets.length === 0) {
    // Read after "the engine lacks": what the property's presets need that the engine does not declare.
    const needs = space.presets.map((name) => {
      const preset = getPreset(name);
      return (
        modelFamilyOutside(preset, capabilities.modelFamilies) ??
        familyNotExportable(preset, capabilities.modelFormats) ??
        `${preset.dtype} (declares ${capabilities.dtypes.join(", ")})`
      );
    });
    return `what presets ${space.presets.join(", ")} need: ${[...new Set(needs)].join("; ")}`;
  }
  // A space that drafts from several kinds keeps what the engine runs; a focus on one kind needs exactly it.
  const several = space.drafts.length >= PROPERTY_DRAFTS.length;
  const candidates = several ? EXTERNAL_DRAFTS : space.drafts;
  let drafts = candidates.filter(
    (kind) => capabilities.drafts.includes(kind) && draftExportable(kind, capabilities.modelFormats),
  );
  // A family preset's files carry only standalone drafts: a space of family presets drafts with those, a mixed
  // one whose drafts need more keeps its plain presets (sources/capabilities.ts says the same per case).
  const isFamily = (name: string) => modelFamiliesOf(getPreset(name)).length > 0;
  const familyDrafts = drafts.filter((kind) => draftExportable(kind, capabilities.modelFormats, true));
  if (speculative && presets.some(isFamily) && familyDrafts.length < drafts.length) {
    if (presets.every(isFamily)) drafts = familyDrafts;
    else presets = presets.filter((name) => !isFamily(name));
  }
  if (speculative && drafts.length === 0) return `the drafts ${space.drafts.join(", ")}`;
  const topks = space.topks.filter((topk) => topk <= capabilities.maxTopk);
  if (topks.length === 0) return `topk ${space.topks.join("/")} (engine max ${capabilities.maxTopk})`;
  const multiLayer = space.multiLayer.filter((value) => !value || capabilities.multiLayer);
  if (multiLayer.length === 0) return "multi-layer drafting";
  const graphReplay = space.graphReplay.filter((value) => !value || capabilities.graphReplay);
  if (graphReplay.length === 0) return "graph replay";
  const padded = space.padded.filter((value) => !value || (capabilities.graphReplay && capabilities.paddedReplay));
  if (padded.length === 0) return "padded graph replay";
  const overlap = space.overlap.filter((value) => !value || capabilities.overlap);
  if (overlap.length === 0) return "overlap scheduling";
  const prefixCache = space.prefixCache.filter((value) => !value || capabilities.prefixCache);
  if (prefixCache.length === 0) return "the prefix cache";
  // A tight pool matters to admission and eviction: an engine with a prefix cache gets it, others a roomy one.
  const tightPool = space.tightPool.filter((value) => !value || capabilities.prefixCache);
  if (tightPool.length === 0) return "a tight pool (prefix-cache eviction)";
  const pages = pageRange(capabilities.pageSizes);
  const pageMin = Math.max(space.pages.min, pages.min);
  const pageMax = Math.min(space.pages.max, pages.max);
  if (pageMin > pageMax) return `page sizes ${space.pages.min}..${space.pages.max}`;
  const chunked = capabilities.chunkedPrefill;
  if (!chunked && !space.chunk.none) return "chunked prefill";
  if (!chunked && !space.budget.unlimited) return "chunked prefill (a token budget below the prompt)";
  const maxRequests = Math.min(space.requests.max, capabilities.maxBatch);
  if (space.requests.min > maxRequests) return `batches of ${space.requests.min}+ requests`;
  if ((space.minAborts ?? 0) > 0 && !capabilities.aborts) return "aborts";
  // Replicas go into one batch: the engine's maxBatch bounds them.
  const replicas = space.replicas && {
    min: space.replicas.min,
    max: Math.min(space.replicas.max, Math.floor(capabilities.maxBatch / maxRequests)),
  };
  if (replicas && replicas.min > replicas.max)
    return `batches of ${replicas.min}+ replicas (maxBatch ${capabilities.maxBatch})`;
  const retractsMax = capabilities.retracts ? space.retracts.max : 0;
  if (space.retracts.min > retractsMax) return "retracts";
  const steps = { min: space.steps.min, max: Math.min(space.steps.max, capabilities.maxNumSteps) };
  if (steps.min > steps.max) return `numSteps ${space.steps.min}+`;
  const undeclared = (space.sampling.required ?? []).find((option) => !capabilities.sampling.includes(option));
  if (undeclared) return `sampling option ${undeclared}`;
  const samplingOptions = space.sampling.options.filter((option) => capabilities.sampling.includes(option));
  if (space.sampling.always && samplingOptions.length === 0) return "request sampling options";
  // llama.cpp's eagle3 GGUF names exactly 3 auxiliary layers: an engine that reads EAGLE-3 heads from GGUF
  // alone gets 3 (the default set has 3 too).
  const auxLayerCounts =
    space.auxLayerCounts && eagle3GgufOnly(capabilities.modelFormats)
      ? { min: LLAMA_EAGLE3_AUX_LAYERS, max: LLAMA_EAGLE3_AUX_LAYERS }
      : space.auxLayerCounts;
  return {
    ...space,
    presets,
    ...(auxLayerCounts ? { auxLayerCounts } : {}),
    // The gathered feed is the reference engine's ONNX feed: an external engine has its own.
    ...(space.gatherContext ? { gatherContext: [false] } : {}),
    drafts: speculative ? drafts : space.drafts,
    steps,
    topks,
    multiLayer,
    graphReplay,
    padded,
    overlap,
    prefixCache,
    tightPool,
    pages: { min: pageMin, max: pageMax },
    chunk: chunked ? space.chunk : { ...space.chunk, noneOnly: true },
    budget: chunked ? space.budget : { ...space.budget, unlimitedOnly: true },
    requests: { min: space.requests.min, max: maxRequests },
    ...(replicas ? { replicas } : {}),
    maxArrival: capabilities.arrivals ? space.maxArrival : 0,
    maxAborts: capabilities.aborts ? space.maxAborts : 0,
    retracts: { min: space.retracts.min, max: retractsMax },
    sampling: { ...space.sampling, options: samplingOptions },
    // Speculation schedules only where declared (capabilities.draftSchedule).
    ...(space.draftSchedule && !capabilities.draftSchedule ? { draftSchedule: false } : {}),
    // The context boundary only where declared (capabilities.contextLimits).
    ...(space.contextBoundary && !capabilities.contextLimits ? { contextBoundary: false } : {}),
    // Stop strings only where honored (the sampling option stop).
    ...(space.text && !capabilities.sampling.includes("stop") ? { text: false } : {}),
    // Request slots only where declared (capabilities.requestSlots).
    ...(space.slotReuse && !capabilities.requestSlots ? { slotReuse: false } : {}),
    mode: speculative ? "speculative" : "target-only",
  };
}
