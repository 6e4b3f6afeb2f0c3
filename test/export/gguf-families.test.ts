// GGUF files of issue 29's families read back with an independent parser (@huggingface/gguf): the keys and
// tensors the bundled llama.cpp's loaders require (src/models/granite-swa.cpp, granite-hybrid.cpp:
// load_arch_hparams / load_arch_tensors, with their dims), and the weights, which with the spec rebuilt from
// the metadata alone (window and pattern, rope.scaling.*, ssm.*) reproduce the golden tokens (swa-mirror) or the
// reference forward (a hybrid whose Mamba2 blocks are twice the model's width, the one granitehybrid loads).
// llama-server itself runs swa-mirror in test/adapter/llama-server/families.test.ts.
import { gguf } from "@huggingface/gguf";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planExport } from "../../src/golden/export.ts";
import { familyGguf, NO_SINK } from "../../src/export/gguf-families.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import type { ModelSpec } from "../../src/model/spec.ts";
import { generateTargetWeights, type LayerWeights, type TargetWeights } from "../../src/model/weights.ts";
import { argmaxAndMargin } from "../helpers/checkpoint-read.ts";
import { golden } from "../helpers/golden-runs.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-gguf-families-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Tensors = Map<string, { dims: number[]; values: Float64Array }>;

async function read(bytes: Uint8Array): Promise<{ metadata: Record<string, any>; tensors: Tensors }> {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.gguf`);
  writeFileSync(path, bytes);
  const parsed = await gguf(path, { allowLocalFile: true });
  const data = readFileSync(path);
  const tensors: Tensors = new Map();
  for (const info of parsed.tensorInfos) {
    const dims = info.shape.map(Number);
    const count = dims.reduce((a, b) => a * b, 1);
    const start = Number(parsed.tensorDataOffset + info.offset);
    tensors.set(info.name, {
      dims,
      values: Float64Array.from({ length: count }, (_, i) => data.readFloatLE(start + 4 * i)),
    });
  }
  return { metadata: parsed.metadata as Record<string, any>, tensors };
}

/** ggml [in, out] rows back to our [in, out], q/k un-permuted from llama.cpp's interleaved RoPE order. */
function fromGgml(values: Float64Array, inDim: number, outDim: number, ropeHeads = 0, headDim = 0): Float64Array {
  const rows = Float64Array.from(values);
  if (ropeHeads > 0)
    for (let h = 0; h < ropeHeads; h++)
      for (let half = 0; half < 2; half++)
        for (let j = 0; j < headDim / 2; j++) {
          const stored = (h * headDim + 2 * j + half) * inDim;
          rows.set(values.subarray(stored, stored + inDim), (h * headDim + half * (headDim / 2) + j) * inDim);
        }
  const out = new Float64Array(rows.length);
  for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) out[i * outDim + o] = rows[o * inDim + i];
  return out;
}

function get(tensors: Tensors, name: string, dims: number[]): Float64Array {
  const tensor = tensors.get(name);
  if (!tensor) throw new Error(`missing ${name}`);
  expect(tensor.dims, name).toEqual(dims);
  return tensor.values;
}

/** The spec from the metadata alone. */
function specFrom(metadata: Record<string, any>): ModelSpec {
  const arch = metadata["general.architecture"] as string;
  const n = (key: string) => Number(metadata[`${arch}.${key}`]);
  const kv = metadata[`${arch}.attention.head_count_kv`];
  const spec: ModelSpec = {
    name: "from-gguf",
    vocab: (metadata["tokenizer.ggml.tokens"] as string[]).length,
    hidden: n("embedding_length"),
    layers: n("block_count"),
    heads: n("attention.head_count"),
    kvHeads: Array.isArray(kv) ? Math.max(...kv.map(Number)) : Number(kv),
    headDim: n("rope.dimension_count"),
    intermediate: n("feed_forward_length"),
    ropeTheta: n("rope.freq_base"),
    maxPositions: n("context_length"),
    dtype: "float64",
    seed: 0,
    bosId: Number(metadata["tokenizer.ggml.bos_token_id"]),
    eosId: Number(metadata["tokenizer.ggml.eos_token_id"]),
    preamble: [Number(metadata["tokenizer.ggml.bos_token_id"])],
    rmsEps: n("attention.layer_norm_rms_epsilon"),
    logitStd: 1,
  };
  const scaling = metadata[`${arch}.rope.scaling.type`];
  if (scaling === "linear") spec.ropeScaling = { type: "linear", factor: n("rope.scaling.factor") };
  if (scaling === "yarn")
    spec.ropeScaling = {
      type: "yarn",
      factor: n("rope.scaling.factor"),
      originalMaxPositions: n("rope.scaling.original_context_length"),
    };
  if (arch === "granite_swa") {
    const pattern = (metadata["granite_swa.attention.sliding_window_pattern"] as unknown[]).map(Number);
    spec.slidingWindow = { size: n("attention.sliding_window"), layers: pattern.flatMap((on, l) => (on ? [l] : [])) };
  }
  if (arch === "granitehybrid") {
    const inner = n("ssm.inner_size");
    const heads = n("ssm.time_step_rank");
    expect(n("ssm.group_count")).toBe(1);
    spec.recurrent = {
      layers: (kv as unknown[]).flatMap((count, l) => (Number(count) === 0 ? [l] : [])),
      heads,
      headDim: inner / heads,
      stateSize: n("ssm.state_size"),
      convKernel: n("ssm.conv_kernel"),
    };
  }
  return spec;
}

function weightsFrom(spec: ModelSpec, tensors: Tensors): TargetWeights {
  const { hidden, heads, kvHeads, headDim, intermediate, vocab } = spec;
  const layers = Array.from({ length: spec.layers }, (_, l): LayerWeights => {
    const mlp = {
      attnNorm: get(tensors, `blk.${l}.attn_norm.weight`, [hidden]),
      mlpNorm: get(tensors, `blk.${l}.ffn_norm.weight`, [hidden]),
      wGate: fromGgml(get(tensors, `blk.${l}.ffn_gate.weight`, [hidden, intermediate]), hidden, intermediate),
      wUp: fromGgml(get(tensors, `blk.${l}.ffn_up.weight`, [hidden, intermediate]), hidden, intermediate),
      wDown: fromGgml(get(tensors, `blk.${l}.ffn_down.weight`, [intermediate, hidden]), intermediate, hidden),
    };
    if (spec.recurrent?.layers.includes(l)) {
      const { heads: mambaHeads, headDim: mambaHeadDim, stateSize, convKernel } = spec.recurrent;
      const inner = mambaHeads * mambaHeadDim;
      const convDim = inner + 2 * stateSize;
      const projWidth = inner + convDim + mambaHeads;
      const conv = get(tensors, `blk.${l}.ssm_conv1d.weight`, [convKernel, convDim]);
      const convWeight = new Float64Array(conv.length);
      for (let c = 0; c < convDim; c++)
        for (let k = 0; k < convKernel; k++) convWeight[k * convDim + c] = conv[c * convKernel + k];
      const empty = new Float64Array(0);
      return {
        ...mlp,
        wq: empty,
        wk: empty,
        wv: empty,
        wo: empty,
        mamba: {
          inProj: fromGgml(get(tensors, `blk.${l}.ssm_in.weight`, [hidden, projWidth]), hidden, projWidth),
          convWeight,
          convBias: get(tensors, `blk.${l}.ssm_conv1d.bias`, [convDim]),
          dtBias: get(tensors, `blk.${l}.ssm_dt.bias`, [mambaHeads]),
          // llama.cpp's ssm_a holds A = -exp(A_log).
          aLog: get(tensors, `blk.${l}.ssm_a`, [1, mambaHeads]).map((a) => Math.log(-a)),
          d: get(tensors, `blk.${l}.ssm_d`, [1, mambaHeads]),
          normWeight: get(tensors, `blk.${l}.ssm_norm.weight`, [inner, 1]),
          outProj: fromGgml(get(tensors, `blk.${l}.ssm_out.weight`, [inner, hidden]), inner, hidden),
        },
      };
    }
    const q = get(tensors, `blk.${l}.attn_q.weight`, [hidden, heads * headDim]);
    const k = get(tensors, `blk.${l}.attn_k.weight`, [hidden, kvHeads * headDim]);
    return {
      ...mlp,
      wq: fromGgml(q, hidden, heads * headDim, heads, headDim),
      wk: fromGgml(k, hidden, kvHeads * headDim, kvHeads, headDim),
      wv: fromGgml(get(tensors, `blk.${l}.attn_v.weight`, [hidden, kvHeads * headDim]), hidden, kvHeads * headDim),
      wo: fromGgml(get(tensors, `blk.${l}.attn_output.weight`, [heads * headDim, hidden]), heads * headDim, hidden),
    };
  });
  return {
    embed: get(tensors, "token_embd.weight", [hidden, vocab]),
    layers,
    finalNorm: get(tensors, "output_norm.weight", [hidden]),
    lmHead: fromGgml(get(tensors, "output.weight", [hidden, vocab]), hidden, vocab),
  };
}

describe("GGUF files of the issue 29 families", () => {
  it("swa-mirror: granite_swa with the keys and tensors its loader requires; the metadata and weights give the golden tokens", async () => {
    const files = planExport(golden("swa-mirror"), "gguf");
    const { metadata, tensors } = await read(files.get("swa-mirror/target.gguf") as Uint8Array);
    expect(metadata["general.architecture"]).toBe("granite_swa");
    // Required by llama_model_granite_swa::load_arch_hparams (get_key / get_arr without `false`).
    for (const key of [
      "attention.layer_norm_rms_epsilon",
      "logit_scale",
      "attention.sliding_window_pattern",
      "attention.sliding_window",
    ])
      expect(metadata, key).toHaveProperty([`granite_swa.${key}`]);
    expect(Number(metadata["granite_swa.logit_scale"])).toBe(1);
    const spec = specFrom(metadata);
    const expected = golden("swa-mirror").models.target.spec;
    expect(spec.slidingWindow).toEqual(expected.slidingWindow);
    expect(spec.ropeScaling).toEqual({ ...expected.ropeScaling });
    // Per layer: the Llama block, plus the attention sinks granite_swa requires, at "no sink".
    const perLayer = [
      "attn_norm",
      "attn_q",
      "attn_k",
      "attn_v",
      "attn_output",
      "attn_sinks",
      "ffn_norm",
      "ffn_gate",
      "ffn_up",
      "ffn_down",
    ];
    expect([...tensors.keys()].sort()).toEqual(
      [
        "token_embd.weight",
        "output_norm.weight",
        "output.weight",
        ...Array.from({ length: spec.layers }, (_, l) => perLayer.map((name) => `blk.${l}.${name}.weight`)).flat(),
      ].sort(),
    );
    for (let l = 0; l < spec.layers; l++)
      expect([...get(tensors, `blk.${l}.attn_sinks.weight`, [spec.heads])]).toEqual(
        new Array(spec.heads).fill(Math.fround(NO_SINK)),
      );
    const weights = weightsFrom(spec, tensors);
    for (const goldenCase of golden("swa-mirror").cases)
      for (const request of goldenCase.expected.requests) {
        const prompt = goldenCase.case.workload.requests.find((candidate) => candidate.id === request.id)!.prompt;
        const { logits } = referenceTarget(spec, weights, [...prompt, ...request.tokens]);
        request.tokens.forEach((token, i) =>
          expect(
            argmaxAndMargin(logits, prompt.length - 1 + i, spec.vocab).argmax,
            `request ${request.id} token ${i}`,
          ).toBe(token),
        );
      }
  });

  it("the hybrid presets are refused with llama.cpp's reason; a hybrid of Mamba2 blocks twice the width is granitehybrid", async () => {
    expect(() => planExport(golden("hybrid-mirror"), "gguf")).toThrow(/GGML_ASSERT\(2 \* n_embd == d_inner\)/);
    const spec: ModelSpec = {
      ...getPreset("hybrid"),
      recurrent: { layers: [0, 2], heads: 8, headDim: 8, stateSize: 4, convKernel: 4 },
    };
    const original = generateTargetWeights(spec);
    const { metadata, tensors } = await read(
      familyGguf(spec, original, { role: "target", onnxDigest: "0".repeat(64) }),
    );
    expect(metadata["general.architecture"]).toBe("granitehybrid");
    for (const key of ["ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.group_count"])
      expect(metadata, key).toHaveProperty([`granitehybrid.${key}`]);
    const read_ = specFrom(metadata);
    expect(read_.recurrent).toEqual(spec.recurrent);
    const weights = weightsFrom(read_, tensors);
    const tokens = [1, 5, 9, 13, 17, 3, 40, 22, 8, 61, 7];
    const want = referenceTarget(spec, original, tokens).logits;
    const got = referenceTarget(read_, weights, tokens).logits;
    for (let row = 0; row < tokens.length; row++)
      expect(argmaxAndMargin(got, row, spec.vocab).argmax).toBe(argmaxAndMargin(want, row, spec.vocab).argmax);
  });
});
