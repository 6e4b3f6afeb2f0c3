// The HF checkpoints of issue 29's families read back with the independent safetensors reader: the spec is
// rebuilt from config.json alone (Ministral's layer_types and sliding_window, rope_parameters, GraniteMoeHybrid's
// layer_types and mamba_* fields), the weights from transformers' tensor names (GraniteMoeHybrid's mamba.*,
// shared_mlp.input_linear = [gate; up], conv1d [channels, 1, K]), and the pure-TS forward over them must give
// the golden tokens and margins: a field or tensor the writer dropped or laid out wrongly changes them. The
// RoPE frequencies are also compared with what transformers 5.17 computed from these configs on the GPU machine
// (recorded by scripts/gpu/verify_families.py, fixtures/transformers/README.md).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planExport, writeExport } from "../../src/golden/export.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { ropeFrequencies, type RopeScaling } from "../../src/model/rope-scaling.ts";
import { MIRROR_LOGIT_SCALE, type ModelSpec } from "../../src/model/spec.ts";
import type { LayerWeights, TargetWeights } from "../../src/model/weights.ts";
import { argmaxAndMargin, fromLinear, layerFrom, readSafetensors, type Tensor } from "../helpers/checkpoint-read.ts";
import { golden } from "../helpers/golden-runs.ts";

const SUITES = ["swa-mirror", "swa-f64-mirror", "hybrid-mirror"];
const dir = mkdtempSync(join(tmpdir(), "specconf-hf-families-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  for (const suite of SUITES) writeExport(dir, planExport(golden(suite), "hf"));
});

function ropeScalingFrom(parameters: Record<string, number | string>): RopeScaling | undefined {
  if (parameters.rope_type === "default") return undefined;
  if (parameters.rope_type === "linear") return { type: "linear", factor: parameters.factor as number };
  return {
    type: "yarn",
    factor: parameters.factor as number,
    originalMaxPositions: parameters.original_max_position_embeddings as number,
    betaFast: parameters.beta_fast as number,
    betaSlow: parameters.beta_slow as number,
  };
}

/** The spec from config.json alone. */
function specFrom(config: Record<string, any>, dtype: ModelSpec["dtype"]): ModelSpec {
  const spec: ModelSpec = {
    name: "from-config",
    vocab: config.vocab_size,
    hidden: config.hidden_size,
    layers: config.num_hidden_layers,
    heads: config.num_attention_heads,
    kvHeads: config.num_key_value_heads,
    headDim: config.head_dim,
    intermediate: config.shared_intermediate_size ?? config.intermediate_size,
    ropeTheta: config.rope_parameters.rope_theta,
    maxPositions: 256,
    dtype,
    seed: 0,
    bosId: config.bos_token_id,
    eosId: config.eos_token_id,
    preamble: [config.bos_token_id],
    rmsEps: config.rms_norm_eps,
    logitStd: 1,
  };
  const scaling = ropeScalingFrom(config.rope_parameters);
  if (scaling) spec.ropeScaling = scaling;
  if (config.model_type === "ministral") {
    const layers = (config.layer_types as string[]).flatMap((type, l) => (type === "sliding_attention" ? [l] : []));
    spec.slidingWindow = { size: config.sliding_window, layers };
  }
  if (config.model_type === "granitemoehybrid") {
    expect(config).toMatchObject({
      embedding_multiplier: 1,
      residual_multiplier: 1,
      logits_scaling: 1,
      attention_multiplier: 1 / Math.sqrt(config.head_dim),
      num_local_experts: 0,
      mamba_n_groups: 1,
      position_embedding_type: "rope",
    });
    expect(config.mamba_expand * config.hidden_size).toBe(config.mamba_n_heads * config.mamba_d_head);
    spec.recurrent = {
      layers: (config.layer_types as string[]).flatMap((type, l) => (type === "linear_attention" ? [l] : [])),
      heads: config.mamba_n_heads,
      headDim: config.mamba_d_head,
      stateSize: config.mamba_d_state,
      convKernel: config.mamba_d_conv,
    };
  }
  return spec;
}

/** A GraniteMoeHybrid layer by transformers' names. */
function hybridLayer(tensors: ReadonlyMap<string, Tensor>, prefix: string, spec: ModelSpec): LayerWeights {
  const get = (name: string) => {
    const tensor = tensors.get(`${prefix}.${name}`);
    if (!tensor) throw new Error(`missing ${prefix}.${name}`);
    return tensor;
  };
  const inputLinear = get("shared_mlp.input_linear.weight");
  const intermediate = inputLinear.shape[0] / 2;
  const half = (which: number): Tensor => ({
    dtype: inputLinear.dtype,
    shape: [intermediate, spec.hidden],
    values: inputLinear.values.slice(which * intermediate * spec.hidden, (which + 1) * intermediate * spec.hidden),
  });
  const mlp = {
    attnNorm: get("input_layernorm.weight").values,
    mlpNorm: get("post_attention_layernorm.weight").values,
    wGate: fromLinear(half(0)),
    wUp: fromLinear(half(1)),
    wDown: fromLinear(get("shared_mlp.output_linear.weight")),
  };
  if (!tensors.has(`${prefix}.mamba.in_proj.weight`)) {
    const attention = ["q", "k", "v", "o"].map((p) => fromLinear(get(`self_attn.${p}_proj.weight`)));
    return { ...mlp, wq: attention[0], wk: attention[1], wv: attention[2], wo: attention[3] };
  }
  const conv = get("mamba.conv1d.weight");
  const [channels, , kernel] = conv.shape;
  const convWeight = new Float64Array(channels * kernel);
  for (let c = 0; c < channels; c++)
    for (let k = 0; k < kernel; k++) convWeight[k * channels + c] = conv.values[c * kernel + k];
  const empty = new Float64Array(0);
  return {
    ...mlp,
    wq: empty,
    wk: empty,
    wv: empty,
    wo: empty,
    mamba: {
      inProj: fromLinear(get("mamba.in_proj.weight")),
      convWeight,
      convBias: get("mamba.conv1d.bias").values,
      dtBias: get("mamba.dt_bias").values,
      aLog: get("mamba.A_log").values,
      d: get("mamba.D").values,
      normWeight: get("mamba.norm.weight").values,
      outProj: fromLinear(get("mamba.out_proj.weight")),
    },
  };
}

function load(suite: string, role: string): { spec: ModelSpec; weights: TargetWeights; config: Record<string, any> } {
  const path = join(dir, suite, role);
  const config = JSON.parse(readFileSync(join(path, "config.json"), "utf8"));
  const tensors = readSafetensors(join(path, "model.safetensors"));
  const spec = specFrom(config, tensors.get("model.embed_tokens.weight")!.dtype === "F32" ? "float32" : "float64");
  const layers = Array.from({ length: spec.layers }, (_, l) =>
    spec.recurrent ? hybridLayer(tensors, `model.layers.${l}`, spec) : layerFrom(tensors, `model.layers.${l}`),
  );
  const weights = {
    embed: tensors.get("model.embed_tokens.weight")!.values,
    layers,
    finalNorm: tensors.get("model.norm.weight")!.values,
    lmHead: fromLinear(tensors.get("lm_head.weight")!),
  };
  return { spec, weights, config };
}

describe("HF checkpoints of the issue 29 families", () => {
  for (const suite of SUITES) {
    it(`${suite}: config.json and the tensors alone reproduce the golden tokens and margins`, () => {
      const { spec, weights, config } = load(suite, "target");
      const goldenFile = golden(suite);
      const expected = goldenFile.models.target.spec;
      expect(config.architectures).toEqual([
        expected.recurrent ? "GraniteMoeHybridForCausalLM" : "MinistralForCausalLM",
      ]);
      expect(spec.slidingWindow).toEqual(expected.slidingWindow);
      expect(spec.recurrent).toEqual(expected.recurrent);
      expect(ropeFrequencies(spec)).toEqual(ropeFrequencies(expected));
      const tolerance = spec.dtype === "float32" ? 1e-4 : 1e-9;
      for (const goldenCase of goldenFile.cases)
        for (const request of goldenCase.expected.requests) {
          const prompt = goldenCase.case.workload.requests.find((candidate) => candidate.id === request.id)!.prompt;
          const { logits } = referenceTarget(spec, weights, [...prompt, ...request.tokens]);
          request.tokens.forEach((token, i) => {
            const { argmax, margin } = argmaxAndMargin(logits, prompt.length - 1 + i, spec.vocab);
            expect(argmax, `${goldenCase.name} request ${request.id} token ${i}`).toBe(token);
            expect(Math.abs(margin - request.margins[i])).toBeLessThan(tolerance * Math.max(1, request.margins[i]));
          });
        }
      // The standalone draft is the target but for its LM head, which carries the mirror's 2^16 logit scale.
      const targetTensors = readSafetensors(join(dir, suite, "target", "model.safetensors"));
      const lmHead = targetTensors.get("lm_head.weight")!;
      expect(readSafetensors(join(dir, suite, "draft", "model.safetensors"))).toEqual(
        new Map([
          ...targetTensors,
          ["lm_head.weight", { ...lmHead, values: lmHead.values.map((value) => value * MIRROR_LOGIT_SCALE) }],
        ]),
      );
    });
  }

  // What transformers 5.17 built from these configs (MinistralRotaryEmbedding.inv_freq and attention_scaling,
  // float32), printed by scripts/gpu/verify_families.py on the GPU machine.
  const TRANSFORMERS_ROPE: Record<string, { invFreq: number[]; attentionFactor: number }> = {
    "swa-mirror": {
      invFreq: [1.0, 0.02500000037252903, 0.0024999999441206455, 0.0002500000118743628],
      attentionFactor: 1.138629436111989,
    },
    "swa-f64-mirror": {
      invFreq: [0.5, 0.05000000074505806, 0.004999999888241291, 0.0005000000237487257],
      attentionFactor: 1,
    },
  };
  for (const [suite, recorded] of Object.entries(TRANSFORMERS_ROPE))
    it(`${suite}: the RoPE frequencies are those transformers computed from rope_parameters`, () => {
      const { spec } = load(suite, "target");
      const frequencies = ropeFrequencies(spec);
      frequencies.invFreq.forEach((value, i) =>
        expect(Math.abs(value - recorded.invFreq[i])).toBeLessThan(1e-7 * value + 1e-12),
      );
      expect(frequencies.attentionFactor).toBeCloseTo(recorded.attentionFactor, 12);
    });
});
