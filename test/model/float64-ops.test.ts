// float64 graphs keep out the operators that lose float64 precision on some EP, each measured node by node
// against the CPU EP (scripts/gpu/ep-numerics.ts ops): ORT's CUDA Softmax computes to ~2e-8 relative on float64
// (issue 23, docs/findings/ort-cuda-float64-softmax-precision.md), and the opset-23 Attention, RMSNormalization
// and RotaryEmbedding lose float64 precision on the CPU EP already (graphs.ts). float32 graphs may use them.
import { fromBinary } from "@bufbuild/protobuf";
import { ModelProtoSchema } from "onnx-buf";
import { describe, expect, it } from "vitest";
import { buildDraft, buildTarget } from "../../src/model/build.ts";
import { getPreset } from "../../src/model/presets.ts";
import { defaultDraftSpec, MODEL_DRAFT_KINDS } from "../../src/model/spec.ts";

const IMPRECISE_ON_FLOAT64 = ["Softmax", "Attention", "RMSNormalization", "RotaryEmbedding", "ReduceLogSumExp"];

function opTypes(bytes: Uint8Array): Set<string> {
  return new Set(fromBinary(ModelProtoSchema, bytes).graph!.node.map((node) => node.opType));
}

describe("float64 graphs", () => {
  const target = buildTarget(getPreset("tiny-f64"));
  const graphs = [
    ["target", target.graph.bytes],
    ...MODEL_DRAFT_KINDS.map((kind) => [kind, buildDraft(target, defaultDraftSpec(kind)).graphs[0].bytes] as const),
  ] as const;
  for (const [name, bytes] of graphs)
    it(`${name}: no operator that loses float64 precision on an EP`, () => {
      expect([...opTypes(bytes)].filter((op) => IMPRECISE_ON_FLOAT64.includes(op))).toEqual([]);
    });

  it("the float32 target uses the opset-23 operators (the check above reads real op types)", () => {
    const ops = opTypes(buildTarget(getPreset("tiny")).graph.bytes);
    expect(ops.has("Attention")).toBe(true);
  });
});
