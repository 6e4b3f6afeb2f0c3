// The Hugging Face export, read back with an independent minimal safetensors reader (test/helpers/checkpoint-read.ts,
// nothing from src/export), turned back into our [in, out] weights and run through the pure-TS
// float64 forward: it reproduces the golden files' greedy tokens and margins (target), and the golden
// first-round drafts of the EAGLE head. The ONNX export is the exact bytes the golden digests name.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planExport, writeExport } from "../../src/golden/export.ts";
import { referenceEagle, referenceTarget } from "../../src/model/reference-forward.ts";
import { MIRROR_LOGIT_SCALE, type ModelSpec } from "../../src/model/spec.ts";
import type { EagleWeights, TargetWeights } from "../../src/model/weights.ts";
import { argmaxAndMargin, fromLinear, layerFrom, readSafetensors } from "../helpers/checkpoint-read.ts";
import { golden } from "../helpers/golden-runs.ts";

/** ModelSpec from config.json alone (the "specconf" key is not used). */
function specFrom(config: Record<string, unknown>, dtype: ModelSpec["dtype"]): ModelSpec {
  const n = (key: string) => config[key] as number;
  return {
    name: "from-config",
    vocab: n("vocab_size"),
    hidden: n("hidden_size"),
    layers: n("num_hidden_layers"),
    heads: n("num_attention_heads"),
    kvHeads: n("num_key_value_heads"),
    headDim: n("head_dim"),
    intermediate: n("intermediate_size"),
    ropeTheta: n("rope_theta"),
    maxPositions: n("max_position_embeddings"),
    dtype,
    seed: 0,
    bosId: n("bos_token_id"),
    eosId: n("eos_token_id"),
    preamble: [n("bos_token_id")],
    rmsEps: n("rms_norm_eps"),
    logitStd: 1,
  };
}

// ---------------------------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), "specconf-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  for (const suite of ["tiny-eagle", "small-gqa-mirror", "tiny-f64-eagle"]) {
    writeExport(dir, planExport(golden(suite), "hf"));
    writeExport(join(dir, "onnx"), planExport(golden(suite), "onnx"));
  }
});

function loadTarget(
  suite: string,
  role = "target",
): { spec: ModelSpec; weights: TargetWeights; config: Record<string, unknown> } {
  const path = join(dir, suite, role);
  const config = JSON.parse(readFileSync(join(path, "config.json"), "utf8"));
  const tensors = readSafetensors(join(path, "model.safetensors"));
  const dtype = tensors.get("model.embed_tokens.weight")!.dtype === "F32" ? "float32" : "float64";
  const spec = specFrom(config, dtype);
  const weights: TargetWeights = {
    embed: tensors.get("model.embed_tokens.weight")!.values,
    layers: Array.from({ length: spec.layers }, (_, l) => layerFrom(tensors, `model.layers.${l}`)),
    finalNorm: tensors.get("model.norm.weight")!.values,
    lmHead: fromLinear(tensors.get("lm_head.weight")!),
  };
  return { spec, weights, config };
}

describe("Hugging Face export round trip", () => {
  for (const suite of ["small-gqa-mirror", "tiny-f64-eagle", "tiny-eagle"]) {
    it(`${suite}: the Llama checkpoint reproduces the golden tokens and margins (pure-TS forward)`, () => {
      const { spec, weights, config } = loadTarget(suite);
      const goldenFile = golden(suite);
      expect(config).toMatchObject({
        architectures: ["LlamaForCausalLM"],
        model_type: "llama",
        hidden_act: "silu",
        tie_word_embeddings: false,
        torch_dtype: spec.dtype,
      });
      const expectedSpec = goldenFile.models.target.spec;
      expect({
        ...spec,
        name: expectedSpec.name,
        seed: expectedSpec.seed,
        preamble: expectedSpec.preamble,
        logitStd: expectedSpec.logitStd,
      }).toEqual(expectedSpec);
      const tolerance = spec.dtype === "float32" ? 1e-4 : 1e-9;
      for (const goldenCase of goldenFile.cases) {
        for (const request of goldenCase.expected.requests) {
          const prompt = goldenCase.case.workload.requests.find((candidate) => candidate.id === request.id)!.prompt;
          const sequence = [...prompt, ...request.tokens];
          const { logits } = referenceTarget(spec, weights, sequence);
          request.tokens.forEach((token, i) => {
            const { argmax, margin } = argmaxAndMargin(logits, prompt.length - 1 + i, spec.vocab);
            expect(argmax, `${goldenCase.name} request ${request.id} token ${i}`).toBe(token);
            expect(Math.abs(margin - request.margins[i])).toBeLessThan(tolerance * Math.max(1, request.margins[i]));
          });
        }
      }
      // The standalone draft holds the same tensors but the LM head, which carries the mirror's 2^16 logit
      // scale (test/export/mirror-scale.test.ts runs it against the mirror graph).
      const draftTensors = readSafetensors(join(dir, suite, "draft", "model.safetensors"));
      const targetTensors = readSafetensors(join(dir, suite, "target", "model.safetensors"));
      const lmHead = targetTensors.get("lm_head.weight")!;
      expect(draftTensors).toEqual(
        new Map([
          ...targetTensors,
          ["lm_head.weight", { ...lmHead, values: lmHead.values.map((value) => value * MIRROR_LOGIT_SCALE) }],
        ]),
      );
    });
  }

  for (const suite of ["tiny-eagle", "tiny-f64-eagle"]) {
    it(`${suite}: the EAGLE checkpoint reproduces the golden first-round drafts`, () => {
      const { spec, weights } = loadTarget(suite);
      const path = join(dir, suite, "eagle");
      const config = JSON.parse(readFileSync(join(path, "config.json"), "utf8"));
      expect(config).toMatchObject({ architectures: ["LlamaForCausalLMEagle"], num_hidden_layers: 1 });
      const tensors = readSafetensors(join(path, "model.safetensors"));
      expect(
        [...tensors.keys()].some(
          (name) => name.includes("input_layernorm") || name.startsWith("lm_head") || name.startsWith("norm"),
        ),
      ).toBe(false);
      expect(tensors.get("fc.weight")!.shape).toEqual([spec.hidden, 2 * spec.hidden]);
      const eagle: EagleWeights = {
        fc: fromLinear(tensors.get("fc.weight")!),
        fcBias: tensors.get("fc.bias")!.values,
        layer: layerFrom(tensors, "layers.0"),
      };
      expect(tensors.get("embed_tokens.weight")!.values).toEqual(weights.embed);
      let rounds = 0;
      for (const goldenCase of golden(suite).cases) {
        for (const request of goldenCase.expected.requests) {
          const first = request.rounds[0];
          if (!first) continue;
          const prompt = goldenCase.case.workload.requests.find((candidate) => candidate.id === request.id)!.prompt;
          // The first round's root is the first output token; the draft rows pair h_i with x_{i+1}.
          const sequence = [...prompt, request.tokens[0]];
          const L = sequence.length - 1;
          const target = referenceTarget(spec, weights, sequence);
          const tokens = sequence.slice(1);
          const hiddenRows = [target.hidden.slice(0, L * spec.hidden)];
          for (let j = 0; j < first.drafts.length; j++) {
            const hiddenIn = new Float64Array(hiddenRows.reduce((n, part) => n + part.length, 0));
            let offset = 0;
            for (const part of hiddenRows) {
              hiddenIn.set(part, offset);
              offset += part.length;
            }
            const out = referenceEagle(
              spec,
              weights,
              eagle,
              tokens,
              hiddenIn,
              tokens.map((_, i) => i),
            );
            const last = tokens.length - 1;
            const { argmax, margin } = argmaxAndMargin(out.logits, last, spec.vocab);
            expect(argmax, `${goldenCase.name} request ${request.id} draft ${j + 1}`).toBe(first.drafts[j]);
            expect(Math.abs(margin - first.draftMargins[j])).toBeLessThan(spec.dtype === "float32" ? 1e-4 : 1e-9);
            tokens.push(first.drafts[j]);
            hiddenRows.push(out.hidden.slice(last * spec.hidden, (last + 1) * spec.hidden));
          }
          rounds += 1;
        }
      }
      expect(rounds).toBeGreaterThan(0);
    });
  }

  it("the ONNX export is the exact bytes the golden digests name, with a manifest", () => {
    for (const suite of ["tiny-eagle", "small-gqa-mirror"]) {
      const goldenFile = golden(suite);
      const sha = (file: string) =>
        createHash("sha256")
          .update(readFileSync(join(dir, "onnx", suite, file)))
          .digest("hex");
      expect(sha("target.onnx")).toBe(goldenFile.models.target.digest);
      expect(sha(`${goldenFile.models.draft!.spec.kind}.onnx`)).toBe(goldenFile.models.draft!.digest);
      const manifest = JSON.parse(readFileSync(join(dir, "onnx", suite, "manifest.json"), "utf8"));
      expect(manifest.models.target.digest).toBe(goldenFile.models.target.digest);
    }
  });
});
