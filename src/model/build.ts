// Builds (and caches) the ONNX bytes of a target and its draft from specs, with sha256 digests.
import { createHash } from "node:crypto";
import { writeEagle3Graph, writeEagle3MirrorGraph } from "./eagle3-graphs.ts";
import { generateEagle3OracleWeights } from "./eagle3-oracle.ts";
import { writeEagleGraph, writeMirrorGraph, writeTargetGraph } from "./graphs.ts";
import { stackWindow } from "./window.ts";
import { recurrentWidth } from "./mamba2.ts";
import { referenceTarget } from "./reference-forward.ts";
import {
  eagle3Options,
  isEagle3,
  validateEagle3Options,
  validateModelSpec,
  type DraftSpec,
  type Eagle3Options,
  type ModelSpec,
} from "./spec.ts";
import {
  generateEagle3MirrorWeights,
  generateEagle3Weights,
  generateEagleWeights,
  generateTapVector,
  generateTargetWeights,
  perturbTargetWeights,
  type Eagle3Input,
  type Eagle3MirrorWeights,
  type Eagle3Weights,
  type EagleWeights,
  type TargetWeights,
} from "./weights.ts";

export interface BuiltGraph {
  bytes: Uint8Array;
  /** sha256 of the ONNX bytes: identifies the model in traces and golden files. */
  digest: string;
  layers: number;
  /** Sliding-window attention: the window of the graph's windowed layers (undefined: none is windowed). */
  window?: number;
  /** Hybrid models: a request's recurrent state before its first row (a mirror's: after its prefix). */
  recurrentInitial?: Float64Array;
}

export interface TargetModel {
  spec: ModelSpec;
  weights: TargetWeights;
  graph: BuiltGraph;
  /** The graph also outputs every layer's residual stream (layer_hidden): what EAGLE-3 drafts read. */
  layerStreams: boolean;
}

/** What an EAGLE-3 checkpoint says about how it is fed and what it drafts: config fields and vocabulary maps. */
export interface Eagle3Checkpoint {
  options: Eagle3Options;
  /** d2t (offsets) and t2d, fc and its optional input norm. */
  input: Eagle3Input;
}

export interface DraftModel {
  spec: DraftSpec;
  /** One graph for a chain/tree draft; module k's graph at index k in multi-layer mode. */
  graphs: BuiltGraph[];
  /** What the draft computes with, for cache-free references. */
  stack: TargetWeights;
  eagle?: EagleWeights;
  tap?: Float64Array;
  /** EAGLE-3 drafts: the checkpoint's config and maps, and the weights of the head or the EAGLE-3 mirror. */
  eagle3?: Eagle3Checkpoint;
  eagle3Head?: Eagle3Weights;
  eagle3Mirror?: Eagle3MirrorWeights;
}

export function digestOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function built(bytes: Uint8Array, layers: number, window?: number, recurrentInitial?: Float64Array): BuiltGraph {
  const graph: BuiltGraph = { bytes, digest: digestOf(bytes), layers };
  if (window !== undefined) graph.window = window;
  if (recurrentInitial && recurrentInitial.length > 0) graph.recurrentInitial = recurrentInitial;
  return graph;
}

const targetCache = new Map<string, TargetModel>();
const draftCache = new Map<string, DraftModel>();
/** Mirror-family weights and graphs per draft step: drafts of 1..S modules share their first graphs. */
const mirrorStackCache = new Map<string, { stack: TargetWeights; tap?: Float64Array }>();
const mirrorGraphCache = new Map<string, BuiltGraph>();

/** layerStreams: the graph that also outputs every layer's residual stream (for EAGLE-3 drafts); same weights. */
export function buildTarget(spec: ModelSpec, layerStreams = false): TargetModel {
  const key = JSON.stringify([spec, layerStreams]);
  let model = targetCache.get(key);
  if (!model) {
    validateModelSpec(spec);
    const weights = layerStreams ? buildTarget(spec).weights : generateTargetWeights(spec);
    model = {
      spec,
      weights,
      graph: built(
        writeTargetGraph(spec, weights, layerStreams),
        spec.layers,
        stackWindow(spec),
        new Float64Array(recurrentWidth(spec)),
      ),
      layerStreams,
    };
    targetCache.set(key, model);
  }
  return model;
}

/** numModules > 1 builds multi-layer (MTP-style) mirror modules, module k at draft step k. */
export function buildDraft(target: TargetModel, draft: DraftSpec, numModules = 1): DraftModel {
  const key = JSON.stringify([target.spec, draft, numModules]);
  let model = draftCache.get(key);
  if (model) return model;
  const spec = target.spec;
  if (isEagle3(draft.kind)) {
    if (numModules !== 1) throw new Error("multi-layer drafting needs a mirror-family draft");
    validateEagle3Options(spec, draft);
    const options = eagle3Options(spec, draft);
    if (draft.kind === "eagle3") {
      const head = draft.oracle
        ? generateEagle3OracleWeights(spec, draft, target.weights)
        : generateEagle3Weights(spec, draft);
      model = {
        spec: draft,
        graphs: [built(writeEagle3Graph(spec, draft, target.weights, head), 1)],
        stack: target.weights,
        eagle3: { options, input: head },
        eagle3Head: head,
      };
    } else {
      const mirror = generateEagle3MirrorWeights(spec, target.weights, draft);
      model = {
        spec: draft,
        graphs: [built(writeEagle3MirrorGraph(spec, draft, target.weights, mirror), spec.layers, stackWindow(spec))],
        stack: target.weights,
        eagle3: { options, input: mirror },
        eagle3Mirror: mirror,
      };
    }
  } else if (draft.kind === "eagle") {
    if (numModules !== 1) throw new Error("multi-layer drafting needs a mirror-family draft");
    const eagle = generateEagleWeights(spec, draft);
    model = {
      spec: draft,
      graphs: [built(writeEagleGraph(spec, target.weights, eagle), 1)],
      stack: target.weights,
      eagle,
    };
  } else {
    const mirrorKey = JSON.stringify([target.spec, draft]);
    let mirror = mirrorStackCache.get(mirrorKey);
    if (!mirror) {
      const stack = draft.kind === "noisy-mirror" ? perturbTargetWeights(spec, target.weights, draft) : target.weights;
      mirror = { stack, tap: draft.kind === "tapped-mirror" ? generateTapVector(spec, draft) : undefined };
      mirrorStackCache.set(mirrorKey, mirror);
    }
    const { stack, tap } = mirror;
    const layerCount = draft.kind === "truncated-mirror" ? Math.min(draft.truncatedLayers, spec.layers) : spec.layers;
    const graphs = Array.from({ length: numModules }, (_, step) => {
      const graphKey = JSON.stringify([target.spec, draft, step]);
      let graph = mirrorGraphCache.get(graphKey);
      if (!graph) {
        const options = { stack, layerCount, step, tap: tap && { vector: tap, delta: draft.tapDelta } };
        // A mirror skips its prefix (BOS, preamble[0..step]) in the graph: its recurrence starts after it.
        const initial = spec.recurrent
          ? referenceTarget(spec, stack, spec.preamble.slice(0, step + 1), undefined, layerCount).recurrentState
          : undefined;
        graph = built(writeMirrorGraph(spec, draft, options), layerCount, stackWindow(spec, layerCount), initial);
        mirrorGraphCache.set(graphKey, graph);
      }
      return graph;
    });
    model = { spec: draft, graphs, stack, tap };
  }
  draftCache.set(key, model);
  return model;
}
