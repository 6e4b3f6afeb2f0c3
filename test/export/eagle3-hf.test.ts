// The EAGLE-3 checkpoint, read back with an independent minimal safetensors reader (F32/F64/I64/BOOL, nothing
// from src/export) and its config.json read as SGLang and vLLM read it: the auxiliary layer ids and
// norm_before_fc from eagle_config, the draft vocabulary from d2t. Rebuilt into our weights and run through the
// pure-TS float64 forward over the exported Llama target's residual streams, it reproduces the golden
// first-round drafts of small-gqa-eagle3 (target ids through d2t) and their draft margins.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planExport, writeExport } from "../../src/golden/export.ts";
import { referenceEagle3 } from "../../src/model/eagle3-reference.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import type { Eagle3Weights, TargetWeights } from "../../src/model/weights.ts";
import {
  argmaxAndMargin,
  fromLinear,
  layerFrom,
  readSafetensors,
  tensorOf as get,
} from "../helpers/checkpoint-read.ts";
import { golden } from "../helpers/golden-runs.ts";

const SUITE = "small-gqa-eagle3";

const dir = mkdtempSync(join(tmpdir(), "specconf-eagle3-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  writeExport(dir, planExport(golden(SUITE), "hf"));
  writeExport(join(dir, "onnx"), planExport(golden(SUITE), "onnx"));
});

function loadTarget(): TargetWeights {
  const tensors = readSafetensors(join(dir, SUITE, "target", "model.safetensors"));
  const layers = golden(SUITE).models.target.spec.layers;
  return {
    embed: get(tensors, "model.embed_tokens.weight").values,
    layers: Array.from({ length: layers }, (_, l) => layerFrom(tensors, `model.layers.${l}`)),
    finalNorm: get(tensors, "model.norm.weight").values,
    lmHead: fromLinear(get(tensors, "lm_head.weight")),
  };
}

describe("EAGLE-3 export round trip", () => {
  it(`${SUITE}: the EAGLE-3 checkpoint reproduces the golden first-round drafts through d2t`, () => {
    const goldenFile = golden(SUITE);
    const spec = goldenFile.models.target.spec;
    const path = join(dir, SUITE, "eagle3");
    const config = JSON.parse(readFileSync(join(path, "config.json"), "utf8"));
    expect(config).toMatchObject({ architectures: ["LlamaForCausalLMEagle3"], num_hidden_layers: 1 });
    const auxLayers = config.eagle_config.eagle_aux_hidden_state_layer_ids as number[];
    const normBeforeFc = config.eagle_config.norm_before_fc as boolean;
    expect(auxLayers).toEqual([0, 1, 2]);
    expect(normBeforeFc).toBe(true);
    const tensors = readSafetensors(join(path, "model.safetensors"));
    const draftVocab = config.draft_vocab_size as number;
    expect(get(tensors, "fc.weight").shape).toEqual([spec.hidden, auxLayers.length * spec.hidden]);
    expect(get(tensors, "midlayer.self_attn.q_proj.weight").shape[1]).toBe(2 * spec.hidden);
    expect(get(tensors, "lm_head.weight").shape).toEqual([draftVocab, spec.hidden]);
    expect(get(tensors, "d2t").dtype).toBe("I64");
    expect(get(tensors, "t2d").dtype).toBe("BOOL");
    const d2t = get(tensors, "d2t").values;
    const t2d = get(tensors, "t2d").values;
    const draftToTarget = Array.from(d2t, (offset, draftId) => draftId + offset);
    // t2d marks exactly the image of d2t.
    expect(Array.from(t2d).flatMap((flag, id) => (flag ? [id] : []))).toEqual([...draftToTarget].sort((a, b) => a - b));
    const at = (name: string) => get(tensors, `midlayer.${name}`);
    const head: Eagle3Weights = {
      fc: fromLinear(get(tensors, "fc.weight")),
      inputNorm: get(tensors, "input_norm.weight").values,
      d2t: Int32Array.from(d2t),
      t2d: Uint8Array.from(t2d),
      // The midlayer's input_layernorm is the embedding's norm (embedNorm), not an attention norm.
      layer: {
        ...layerFrom(tensors, "midlayer"),
        attnNorm: undefined,
        embedNorm: at("input_layernorm.weight").values,
        hiddenNorm: at("hidden_norm.weight").values,
      },
      norm: get(tensors, "norm.weight").values,
      lmHead: fromLinear(get(tensors, "lm_head.weight")),
    };
    const target = loadTarget();
    expect(get(tensors, "embed_tokens.weight").values).toEqual(target.embed);
    const tolerance = spec.dtype === "float32" ? 1e-4 : 1e-9;
    const auxWidth = auxLayers.length * spec.hidden;
    let drafts = 0;
    for (const goldenCase of goldenFile.cases) {
      for (const request of goldenCase.expected.requests) {
        const first = request.rounds[0];
        if (!first) continue;
        const prompt = goldenCase.case.workload.requests.find((candidate) => candidate.id === request.id)!.prompt;
        // The first round's root is the first output token; anchor row i pairs position i's aux states with x_{i+1}.
        const sequence = [...prompt, request.tokens[0]];
        const L = sequence.length - 1;
        const { streams } = referenceTarget(spec, target, sequence);
        const tokens = sequence.slice(1);
        // Layer id k names the input of layer k: the stream entering layer k (streams[k]).
        const aux: number[] = [];
        for (let i = 0; i < L; i++)
          for (const layer of auxLayers) aux.push(...streams[layer].subarray(i * spec.hidden, (i + 1) * spec.hidden));
        const hidden: number[] = new Array(L * spec.hidden).fill(0);
        for (let j = 0; j < first.drafts.length; j++) {
          const out = referenceEagle3(
            spec,
            target,
            head,
            tokens,
            Float64Array.from(aux),
            Float64Array.from(hidden),
            tokens.map((_, i) => i),
          );
          const last = tokens.length - 1;
          const { argmax, margin } = argmaxAndMargin(out.logits, last, draftVocab);
          expect(draftToTarget[argmax], `${goldenCase.name} request ${request.id} draft ${j + 1}`).toBe(
            first.drafts[j],
          );
          expect(Math.abs(margin - first.draftMargins[j])).toBeLessThan(tolerance * Math.max(1, first.draftMargins[j]));
          // The next row: the drafted token, the row's own hidden output, no aux states.
          tokens.push(first.drafts[j]);
          aux.push(...new Array(auxWidth).fill(0));
          hidden.push(...out.hidden.subarray(last * spec.hidden, (last + 1) * spec.hidden));
          drafts += 1;
        }
      }
    }
    expect(drafts).toBeGreaterThan(0);
  });

  it(`${SUITE}: the ONNX export is the bytes the golden digests name (the target with its layer streams), with the checkpoint's EAGLE-3 fields`, () => {
    const goldenFile = golden(SUITE);
    const sha = (file: string) =>
      createHash("sha256")
        .update(readFileSync(join(dir, "onnx", SUITE, file)))
        .digest("hex");
    expect(sha("target.onnx")).toBe(goldenFile.models.target.digest);
    expect(sha("eagle3.onnx")).toBe(goldenFile.models.draft!.digest);
    const manifest = JSON.parse(readFileSync(join(dir, "onnx", SUITE, "manifest.json"), "utf8"));
    expect(manifest.models.eagle3).toMatchObject({ auxLayers: [0, 1, 2], normBeforeFc: true });
    const config = JSON.parse(readFileSync(join(dir, SUITE, "eagle3", "config.json"), "utf8"));
    const d2t = readSafetensors(join(dir, SUITE, "eagle3", "model.safetensors")).get("d2t")!.values;
    expect(manifest.models.eagle3.d2t).toEqual([...d2t]);
    expect(manifest.models.eagle3.d2t).toHaveLength(config.draft_vocab_size);
  });
});
