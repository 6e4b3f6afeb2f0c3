// An engine's declared capabilities (its handshake) read as rules over cases: whether a case is inside
// them, and which declared features the cases actually run exercised. Generators narrow their space to the
// same rules (src/properties/arbitraries/capabilities.ts), so a generated case is never refused for a
// capability the engine did not declare; a twin outside them makes its law "not checkable".
import type { Capabilities } from "../adapter/protocol.ts";
import type { Case } from "../case/case.ts";
import { modelFamiliesOf, modelFamilyOutside } from "../model/spec.ts";
import { resolveModelSpec } from "../case/models.ts";
import { draftExportable, familyNotExportable } from "./model-cache.ts";
import { eagle3GgufUnsupported } from "../export/gguf-eagle3.ts";
import type { ModelFormat } from "../adapter/protocol.ts";
import { COVERAGE_LABELS, type CoverageLabel } from "../check/coverage.ts";
import { activeSamplingOptions, samplingOptionsOf, type SamplingOption } from "../sampling/params.ts";

/** Defaults for absent fields: the narrowest engine (one request, no chunking, page 1, float32, chains). */
export function withDefaults(capabilities: Capabilities): Required<Capabilities> {
  return {
    maxNumSteps: 16,
    maxTopk: 1,
    multiLayer: false,
    chunkedPrefill: false,
    pageSizes: [1],
    maxBatch: 1,
    arrivals: false,
    aborts: false,
    retracts: false,
    graphReplay: false,
    paddedReplay: false,
    overlap: false,
    prefixCache: false,
    dtypes: ["float32"],
    sampling: [],
    observes: [],
    draftSchedule: false,
    contextLimits: false,
    requestSlots: false,
    text: false,
    modelFamilies: [],
    ...capabilities,
  };
}

/** Some prompt is prefilled in more than one forward (by chunk size or by the token budget). */
function chunks(testCase: Readonly<Case>): boolean {
  const { chunkSize, tokenBudget } = testCase.engine;
  return testCase.workload.requests.some(
    (request) => request.prompt.length > Math.min(chunkSize ?? Infinity, tokenBudget),
  );
}

/** The engine reads EAGLE-3 heads from GGUF alone (llama.cpp's eagle3 form, which names exactly 3 layers). */
export function eagle3GgufOnly(formats: readonly ModelFormat[]): boolean {
  const others = formats.filter((format) => format !== "gguf");
  return formats.includes("gguf") && (others.length === 0 || !draftExportable("eagle3", others));
}

/** Why the case is outside the capabilities (the first reason), or undefined when the engine can run it. */
export function outsideCapabilities(declared: Capabilities, testCase: Readonly<Case>): string | undefined {
  const capabilities = withDefaults(declared);
  const engine = testCase.engine;
  const workload = testCase.workload;
  if (!capabilities.modes.includes(engine.mode)) return `mode ${engine.mode}`;
  const spec = resolveModelSpec(testCase.model);
  if (!capabilities.dtypes.includes(spec.dtype)) return `dtype ${spec.dtype}`;
  const family = modelFamilyOutside(spec, capabilities.modelFamilies);
  if (family) return family;
  const notExportable = familyNotExportable(spec, capabilities.modelFormats);
  if (notExportable) return notExportable;
  if (workload.requests.length > capabilities.maxBatch)
    return `${workload.requests.length} requests (maxBatch ${capabilities.maxBatch})`;
  if (!capabilities.arrivals && workload.requests.some((request) => request.arrivalStep > 0)) return "later arrivals";
  if (!capabilities.aborts && workload.aborts.length > 0) return "aborts";
  if (!capabilities.retracts && (workload.retracts ?? []).length > 0) return "retracts";
  if (!capabilities.pageSizes.includes(engine.pageSize)) return `page size ${engine.pageSize}`;
  if (!capabilities.chunkedPrefill && chunks(testCase)) return "chunked prefill";
  if (engine.overlap && !capabilities.overlap) return "overlap scheduling";
  if (engine.prefixCache && !capabilities.prefixCache) return "prefix cache";
  const options = new Set(workload.requests.flatMap((request) => samplingOptionsOf(request.sampling)));
  const undeclared = [...options].find((option) => !capabilities.sampling.includes(option));
  if (undeclared) return `sampling option ${undeclared}`;
  if (!capabilities.contextLimits && (engine.contextLength !== undefined || engine.draftContextLength !== undefined))
    return "context limits";
  if (!capabilities.requestSlots && engine.requestSlots !== undefined) return "request slots";
  if (engine.mode !== "speculative") return undefined;
  if (!capabilities.draftSchedule && workload.requests.some((request) => request.draftSchedule))
    return "speculation schedules";
  const kind = testCase.draft?.kind;
  if (!kind || !capabilities.drafts.includes(kind)) return `draft ${kind ?? "none"}`;
  if (!draftExportable(kind, capabilities.modelFormats))
    return `draft ${kind} in formats ${capabilities.modelFormats.join(", ")}`;
  if (kind === "eagle3" && testCase.draft && eagle3GgufOnly(capabilities.modelFormats)) {
    const unsupported = eagle3GgufUnsupported(spec, testCase.draft);
    if (unsupported) return unsupported;
  }
  const families = modelFamiliesOf(spec);
  if (families.length > 0 && !draftExportable(kind, capabilities.modelFormats, true))
    return `draft ${kind} of a ${families.join(", ")} model in formats ${capabilities.modelFormats.join(", ")}`;
  if (engine.numSteps > capabilities.maxNumSteps)
    return `numSteps ${engine.numSteps} (max ${capabilities.maxNumSteps})`;
  if (engine.topk > capabilities.maxTopk) return `topk ${engine.topk} (max ${capabilities.maxTopk})`;
  if (engine.multiLayer && !capabilities.multiLayer) return "multi-layer drafting";
  if (engine.graphReplay && !capabilities.graphReplay) return "graph replay";
  if (engine.graphBuckets && !capabilities.paddedReplay) return "padded graph replay";
  return undefined;
}

/** The declared features a case exercises (for the report of what was never exercised). */
export function featuresOf(testCase: Readonly<Case>): string[] {
  const engine = testCase.engine;
  const features = [`mode ${engine.mode}`, `dtype ${resolveModelSpec(testCase.model).dtype}`];
  if (engine.mode === "speculative") {
    features.push(`draft ${testCase.draft?.kind ?? "none"}`);
    if (engine.topk > 1) features.push("topk > 1");
    if (engine.multiLayer) features.push("multi-layer");
    if (engine.graphReplay) features.push("graph replay");
    if (engine.graphBuckets) features.push("padded replay");
  }
  if (engine.overlap) features.push("overlap");
  if (engine.prefixCache) features.push("prefix cache");
  if (testCase.workload.requests.length > 1) features.push("batches");
  if (testCase.workload.requests.some((request) => request.arrivalStep > 0)) features.push("arrivals");
  if (testCase.workload.aborts.length > 0) features.push("aborts");
  if ((testCase.workload.retracts ?? []).length > 0) features.push("retracts");
  if (engine.pageSize > 1) features.push(`page size ${engine.pageSize}`);
  if (chunks(testCase)) features.push("chunked prefill");
  const options = new Set(testCase.workload.requests.flatMap((request) => activeSamplingOptions(request.sampling)));
  for (const option of options) features.push(`sampling ${option}`);
  if (engine.mode === "speculative" && testCase.workload.requests.some((request) => request.draftSchedule))
    features.push("speculation schedules");
  if (engine.contextLength !== undefined || engine.draftContextLength !== undefined) features.push("context limits");
  if (engine.requestSlots !== undefined) features.push("request slots");
  return features;
}

/** Every feature the capabilities declare (what featuresOf can report for this engine). */
export function declaredFeatures(declared: Capabilities): string[] {
  const capabilities = withDefaults(declared);
  const features = [
    ...capabilities.modes.map((mode) => `mode ${mode}`),
    ...capabilities.dtypes.map((dtype) => `dtype ${dtype}`),
  ];
  if (capabilities.modes.includes("speculative")) {
    features.push(...capabilities.drafts.map((kind) => `draft ${kind}`));
    if (capabilities.maxTopk > 1) features.push("topk > 1");
    if (capabilities.multiLayer) features.push("multi-layer");
    if (capabilities.graphReplay) features.push("graph replay");
    if (capabilities.paddedReplay) features.push("padded replay");
  }
  if (capabilities.overlap) features.push("overlap");
  if (capabilities.prefixCache) features.push("prefix cache");
  if (capabilities.maxBatch > 1) features.push("batches");
  if (capabilities.arrivals) features.push("arrivals");
  if (capabilities.aborts) features.push("aborts");
  if (capabilities.retracts) features.push("retracts");
  features.push(...capabilities.pageSizes.filter((size) => size > 1).map((size) => `page size ${size}`));
  if (capabilities.chunkedPrefill) features.push("chunked prefill");
  features.push(...capabilities.sampling.map((option) => `sampling ${option}`));
  if (capabilities.draftSchedule) features.push("speculation schedules");
  if (capabilities.contextLimits) features.push("context limits");
  if (capabilities.requestSlots) features.push("request slots");
  return features;
}

/** Coverage labels no case within the capabilities can reach: reported, never enforced, for this engine. */
export function unreachableLabels(declared: Capabilities): CoverageLabel[] {
  const capabilities = withDefaults(declared);
  const speculative = capabilities.modes.includes("speculative");
  const observed = capabilities.observes.includes("trace");
  const honors = (option: SamplingOption) => capabilities.sampling.includes(option);
  const verifies = speculative && capabilities.observes.includes("verify");
  const rawPredict = capabilities.observes.includes("rawPredict");
  const draws = capabilities.observes.includes("draws");
  const reachable: Record<CoverageLabel, boolean> = {
    "chunk ends within S of prompt end": capabilities.chunkedPrefill && speculative,
    "request finishes mid-round": speculative && capabilities.observes.includes("verify"),
    // Read from the events: only an engine whose trace shows which requests shared a forward reaches them.
    "batch of 2+ requests": capabilities.maxBatch > 1 && capabilities.observes.includes("batches"),
    "batch of 2+ with K > 1 and N > S + 1":
      capabilities.maxBatch > 1 && capabilities.maxTopk > 1 && capabilities.observes.includes("batches"),
    "abort between forwards": capabilities.aborts,
    "retract between forwards": capabilities.retracts && capabilities.observes.includes("lifecycle"),
    "page boundary inside a verify": capabilities.pageSizes.some((size) => size > 1) && speculative,
    // Discarded work, prefix hits, references and padding rows are trace fields: "lifecycle" and "references".
    "finish with a future token in flight": capabilities.overlap,
    "abort or retract with a future token in flight":
      capabilities.overlap &&
      (capabilities.aborts || capabilities.retracts) &&
      capabilities.observes.includes("lifecycle"),
    "prefix hit mid-page":
      capabilities.prefixCache &&
      capabilities.pageSizes.some((size) => size > 1) &&
      capabilities.observes.includes("lifecycle"),
    "prefix hit at a page boundary":
      capabilities.prefixCache &&
      capabilities.pageSizes.some((size) => size > 1) &&
      capabilities.observes.includes("lifecycle"),
    "eviction while a prefix is shared": capabilities.prefixCache && capabilities.observes.includes("references"),
    "padded bucket with a padding row": capabilities.paddedReplay && speculative,
    "empty-draft round next to a full one":
      speculative &&
      capabilities.drafts.includes("ngram") &&
      capabilities.maxBatch > 1 &&
      capabilities.observes.includes("batches"),
    "stop id and cap inside one accepted run": verifies && honors("stopTokenIds"),
    "min tokens end inside a round": verifies && honors("minNewTokens"),
    "penalties change the greedy token":
      rawPredict && (honors("repetitionPenalty") || honors("presencePenalty") || honors("frequencyPenalty")),
    "bias forces a token the draft does not predict": verifies && rawPredict && honors("logitBias"),
    // Read from the rows' recorded draws (an engine exposing its uniforms).
    "draft rejected, token recovered": verifies && draws && honors("temperature"),
    "second child tested after a rejection": verifies && draws && capabilities.maxTopk > 1 && honors("temperature"),
    "grammar ends inside an accepted run": verifies && honors("grammar"),
    "grammar round rejects a draft": verifies && honors("grammar"),
    "speculation resumes after a round off": verifies && capabilities.draftSchedule,
    "speculation resized mid-request": verifies && capabilities.draftSchedule,
    "request reaches the context limit": capabilities.contextLimits,
    "lookahead cut at the context limit": verifies && capabilities.contextLimits,
    "decoding past the draft's context": verifies && capabilities.contextLimits,
    // Read from the trace's requests (`slot`) and the order their first rows ran in.
    "request on a reused slot": capabilities.requestSlots && capabilities.maxBatch > 1,
    "slot reused after a longer request": capabilities.requestSlots && capabilities.maxBatch > 1,
    // Read from the trace's requests (their output, `stopString` and `deltas`): the text capability.
    "stop string inside an accepted run": verifies && honors("stop") && capabilities.text,
    "stop string across tokens": honors("stop") && capabilities.text,
    "stop string ending inside a token": honors("stop") && capabilities.text,
    "delta of several tokens": speculative && honors("stop") && capabilities.text,
    "two stop strings completed by one token": honors("stop") && capabilities.text,
    "abort while text is held back": capabilities.aborts && honors("stop") && capabilities.text,
    // Read from the case: the gather is the reference engine's ONNX feed; the aux layers a checkpoint's field.
    "context gathered on the CPU EP": false,
    "EAGLE-3 checkpoint's own aux layers":
      speculative && (capabilities.drafts.includes("eagle3") || capabilities.drafts.includes("eagle3-mirror")),
  };
  // Labels are read from traces: an engine that emits none reaches none of them observably.
  return COVERAGE_LABELS.filter((label) => !observed || !reachable[label]);
}
