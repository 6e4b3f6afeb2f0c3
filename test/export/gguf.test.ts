// The GGUF export, read back with an independent parser (@huggingface/gguf) and the tensor bytes at the
// offsets it reports: the metadata llama.cpp needs, ggml dims, aligned offsets, and the weights, which
// (q/k rows un-permuted from llama.cpp's interleaved RoPE order, [out, in] turned back into our [in, out])
// reproduce the golden suites' target tokens with the pure-TS float64 forward. The standalone drafts hold
// exactly the weights their draft kind runs.
import { gguf, type GGUFTensorInfo } from "@huggingface/gguf";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModels } from "../../src/case/models.ts";
import { planExport, writeExport } from "../../src/golden/export.ts";
import { ggufFiles } from "../../src/export/gguf.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { vocabularyOf } from "../../src/model/vocabulary.ts";
import { changesLogits, type SamplingParams } from "../../src/sampling/params.ts";
import { choose, contextOf, processLogits } from "../../src/sampling/process-logits.ts";
import { defaultDraftSpec, MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "../../src/model/spec.ts";
import type { LayerWeights, TargetWeights } from "../../src/model/weights.ts";
import { argmaxAndMargin } from "../helpers/checkpoint-read.ts";
import { golden } from "../helpers/golden-runs.ts";
import { expectMirrorLogits, greedyChain, mirrorGraphRows, standaloneRows } from "../helpers/mirror-logits.ts";

const GGML_F32 = 0;
const dir = mkdtempSync(join(tmpdir(), "specconf-gguf-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ReadBack {
  metadata: Record<string, unknown>;
  tensors: Map<string, { info: GGUFTensorInfo; values: Float64Array }>;
}

async function readGguf(path: string): Promise<ReadBack> {
  const parsed = await gguf(path, { allowLocalFile: true });
  const bytes = readFileSync(path);
  const metadata = parsed.metadata as Record<string, unknown>;
  const alignment = Number(metadata["general.alignment"] ?? 32);
  expect(Number(parsed.tensorDataOffset) % alignment).toBe(0);
  const tensors = new Map<string, { info: GGUFTensorInfo; values: Float64Array }>();
  for (const info of parsed.tensorInfos) {
    expect(info.dtype, info.name).toBe(GGML_F32);
    expect(Number(info.offset) % alignment, `${info.name} offset`).toBe(0);
    const count = info.shape.reduce((product, dim) => product * Number(dim), 1);
    const start = Number(parsed.tensorDataOffset + info.offset);
    expect(start + 4 * count).toBeLessThanOrEqual(bytes.length);
    const values = new Float64Array(count);
    for (let i = 0; i < count; i++) values[i] = bytes.readFloatLE(start + 4 * i);
    tensors.set(info.name, { info, values });
  }
  return { metadata, tensors };
}

/** llama.cpp's interleaved q/k row order back to rotate-half (written from convert_hf_to_gguf.py's permute). */
function unpermute(rows: Float64Array, numHeads: number, headDim: number, inDim: number): Float64Array {
  const out = new Float64Array(rows.length);
  for (let h = 0; h < numHeads; h++)
    for (let half = 0; half < 2; half++)
      for (let j = 0; j < headDim / 2; j++) {
        const stored = (h * headDim + 2 * j + half) * inDim;
        const original = (h * headDim + half * (headDim / 2) + j) * inDim;
        out.set(rows.subarray(stored, stored + inDim), original);
      }
  return out;
}

/** ggml dims [in, out] hold [out, in] rows; ours are [in, out]. */
function fromGgml(values: Float64Array, inDim: number, outDim: number): Float64Array {
  const out = new Float64Array(values.length);
  for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) out[i * outDim + o] = values[o * inDim + i];
  return out;
}

/** The spec's shape from GGUF metadata alone. */
function specFrom(metadata: Record<string, unknown>): ModelSpec {
  const n = (key: string) => Number(metadata[key]);
  const bos = n("tokenizer.ggml.bos_token_id");
  return {
    name: "from-gguf",
    vocab: (metadata["tokenizer.ggml.tokens"] as string[]).length,
    hidden: n("llama.embedding_length"),
    layers: n("llama.block_count"),
    heads: n("llama.attention.head_count"),
    kvHeads: n("llama.attention.head_count_kv"),
    headDim: n("llama.rope.dimension_count"),
    intermediate: n("llama.feed_forward_length"),
    ropeTheta: n("llama.rope.freq_base"),
    maxPositions: n("llama.context_length"),
    dtype: "float64",
    seed: 0,
    bosId: bos,
    eosId: n("tokenizer.ggml.eos_token_id"),
    preamble: [bos],
    rmsEps: n("llama.attention.layer_norm_rms_epsilon"),
    logitStd: 1,
  };
}

function weightsFrom(spec: ModelSpec, read: ReadBack): TargetWeights {
  const get = (name: string, dims: number[]) => {
    const tensor = read.tensors.get(name);
    if (!tensor) throw new Error(`missing ${name}`);
    expect(tensor.info.shape.map(Number), name).toEqual(dims);
    return tensor.values;
  };
  const { hidden, heads, kvHeads, headDim, intermediate, vocab } = spec;
  const layers = Array.from({ length: spec.layers }, (_, l): LayerWeights => {
    const q = get(`blk.${l}.attn_q.weight`, [hidden, heads * headDim]);
    const k = get(`blk.${l}.attn_k.weight`, [hidden, kvHeads * headDim]);
    return {
      attnNorm: get(`blk.${l}.attn_norm.weight`, [hidden]),
      wq: fromGgml(unpermute(q, heads, headDim, hidden), hidden, heads * headDim),
      wk: fromGgml(unpermute(k, kvHeads, headDim, hidden), hidden, kvHeads * headDim),
      wv: fromGgml(get(`blk.${l}.attn_v.weight`, [hidden, kvHeads * headDim]), hidden, kvHeads * headDim),
      wo: fromGgml(get(`blk.${l}.attn_output.weight`, [heads * headDim, hidden]), heads * headDim, hidden),
      mlpNorm: get(`blk.${l}.ffn_norm.weight`, [hidden]),
      wGate: fromGgml(get(`blk.${l}.ffn_gate.weight`, [hidden, intermediate]), hidden, intermediate),
      wUp: fromGgml(get(`blk.${l}.ffn_up.weight`, [hidden, intermediate]), hidden, intermediate),
      wDown: fromGgml(get(`blk.${l}.ffn_down.weight`, [intermediate, hidden]), intermediate, hidden),
    };
  });
  expect(read.tensors.size).toBe(3 + 9 * spec.layers);
  return {
    embed: get("token_embd.weight", [hidden, vocab]),
    layers,
    finalNorm: get("output_norm.weight", [hidden]),
    lmHead: fromGgml(get("output.weight", [hidden, vocab]), hidden, vocab),
  };
}

/**
 * The greedy choice at output token `index` of a golden request: a request with sampling options that change
 * the logits (penalties, bias, min tokens) chose from the processed row, counted from the tokens before it.
 */
function goldenChoice(
  logits: Float64Array,
  spec: ModelSpec,
  prompt: readonly number[],
  tokens: readonly number[],
  index: number,
  sampling: SamplingParams | undefined,
): { argmax: number; margin: number } {
  const row = prompt.length - 1 + index;
  if (!changesLogits(sampling)) return argmaxAndMargin(logits, row, spec.vocab);
  const context = contextOf(prompt, tokens.slice(0, index));
  const { predict, margin } = choose(
    processLogits(logits, row * spec.vocab, spec.vocab, sampling!, context, spec.eosId),
  );
  return { argmax: predict, margin };
}

const SUITES = ["tiny-mirror", "small-gqa-mirror", "tiny-eagle", "tiny-f64-eagle"];

beforeAll(() => {
  for (const suite of SUITES) writeExport(dir, planExport(golden(suite), "gguf"));
});

describe("GGUF export", () => {
  for (const suite of SUITES) {
    it(`${suite}: llama.cpp metadata, and the target reproduces the golden tokens (pure-TS forward)`, async () => {
      const read = await readGguf(join(dir, suite, "target.gguf"));
      const goldenFile = golden(suite);
      const expected = goldenFile.models.target.spec;
      expect(read.metadata).toMatchObject({
        version: 3,
        "general.architecture": "llama",
        "general.file_type": 0,
        "tokenizer.ggml.model": "whitespace",
        "tokenizer.ggml.add_bos_token": false,
        "tokenizer.ggml.add_eos_token": false,
        "specconf.onnx_digest": goldenFile.models.target.digest,
        "specconf.source_dtype": expected.dtype,
      });
      // The vocabulary's texts (what llama.cpp detokenizes), its merges; control tokens marked, named apart.
      const vocabulary = vocabularyOf(expected);
      const tokens = read.metadata["tokenizer.ggml.tokens"] as string[];
      const types = [...(read.metadata["tokenizer.ggml.token_type"] as number[])];
      expect(tokens.map((text, id) => (vocabulary.controlIds.includes(id) ? "" : text))).toEqual(vocabulary.pieces);
      expect(types).toEqual(tokens.map((_, id) => (vocabulary.controlIds.includes(id) ? 3 : 1)));
      expect(new Set(tokens).size).toBe(tokens.length);
      expect(read.metadata["tokenizer.ggml.merges"]).toEqual(
        vocabulary.merges.map(([left, right]) => `${left} ${right}`),
      );
      const spec = specFrom(read.metadata);
      expect({ ...spec, rmsEps: expected.rmsEps }).toEqual({
        ...expected,
        name: spec.name,
        dtype: spec.dtype,
        seed: 0,
        preamble: [expected.bosId],
        logitStd: 1,
      });
      expect(Math.abs(spec.rmsEps - expected.rmsEps)).toBeLessThan(expected.rmsEps * 1e-6);
      const weights = weightsFrom({ ...spec, rmsEps: expected.rmsEps }, read);
      const fromSpec = loadModels(goldenFile.cases[0].case).target.weights;
      if (expected.dtype === "float32") {
        // Float32 weights round-trip bit for bit, so the forward is the golden one exactly.
        expect(weights.layers[0].wq).toEqual(fromSpec.layers[0].wq);
        expect(weights.lmHead).toEqual(fromSpec.lmHead);
      }
      const epsilon = 1e-4; // float64 specs were rounded to F32: only margins above it must keep their argmax
      let compared = 0;
      for (const goldenCase of goldenFile.cases) {
        for (const request of goldenCase.expected.requests) {
          const { prompt, sampling } = goldenCase.case.workload.requests.find(
            (candidate) => candidate.id === request.id,
          )!;
          const { logits } = referenceTarget({ ...spec, rmsEps: expected.rmsEps }, weights, [
            ...prompt,
            ...request.tokens,
          ]);
          for (const [i, token] of request.tokens.entries()) {
            const { argmax, margin } = goldenChoice(logits, spec, prompt, request.tokens, i, sampling);
            if (expected.dtype === "float32") {
              expect(argmax, `${goldenCase.name} request ${request.id} token ${i}`).toBe(token);
              // Golden margins were measured by the float32 ONNX graph: equal to float32 rounding.
              expect(Math.abs(margin - request.margins[i])).toBeLessThan(epsilon * Math.max(1, request.margins[i]));
            } else if (request.margins[i] > epsilon) expect(argmax).toBe(token);
            compared += 1;
          }
        }
      }
      expect(compared).toBeGreaterThan(0);
      const manifest = JSON.parse(readFileSync(join(dir, suite, "manifest.json"), "utf8"));
      expect(manifest.format).toBe("gguf");
      if (expected.dtype === "float64")
        expect(manifest.notes.join(" ")).toMatch(/float64 spec: weights rounded to F32/);
      // The standalone draft is the target's copy but for the role metadata and the output weight, which carries
      // the mirror's 2^16 logit scale (exact: F32 values times a power of two).
      const draft = await readGguf(join(dir, suite, "draft.gguf"));
      expect(draft.metadata["specconf.role"]).toBe("standalone-draft");
      expect(draft.metadata["specconf.logit_scale"]).toBe(MIRROR_LOGIT_SCALE);
      expect(manifest.models.draft.logitScale).toBe(MIRROR_LOGIT_SCALE);
      const scaled = (name: string, values: Float64Array) =>
        name === "output.weight" ? values.map((value) => value * MIRROR_LOGIT_SCALE) : values;
      expect([...draft.tensors.entries()].map(([name, t]) => [name, t.values])).toEqual(
        [...read.tensors.entries()].map(([name, t]) => [name, scaled(name, t.values)]),
      );
    });
  }

  const draftCases: [DraftSpec["kind"], (spec: ModelSpec, draft: DraftSpec) => number][] = [
    ["mirror", (spec) => spec.layers],
    ["truncated-mirror", (_spec, draft) => draft.truncatedLayers],
    ["noisy-mirror", (spec) => spec.layers],
  ];
  for (const [kind, layerCount] of draftCases) {
    it(`the ${kind} standalone draft holds exactly the weights that draft runs`, async () => {
      const draft = { ...defaultDraftSpec(kind), truncatedLayers: 2 };
      const testCase = { ...golden("small-gqa-mirror").cases[0].case, draft };
      const models = loadModels(testCase);
      const files = ggufFiles(models, draft);
      const path = join(dir, `${kind}.gguf`);
      writeFileSync(path, files.draft!);
      const read = await readGguf(path);
      expect(read.metadata["specconf.draft_kind"]).toBe(kind);
      const spec = { ...models.spec, layers: layerCount(models.spec, draft) };
      expect(Number(read.metadata["llama.block_count"])).toBe(spec.layers);
      const weights = weightsFrom(spec, read);
      const stack = models.draft!.stack;
      expect(weights.layers).toEqual(stack.layers.slice(0, spec.layers));
      // The output weight carries the mirror family's 2^16 logit scale (src/export/standalone-draft.ts).
      expect(read.metadata["specconf.logit_scale"]).toBe(MIRROR_LOGIT_SCALE);
      expect([weights.embed, weights.finalNorm, weights.lmHead]).toEqual([
        stack.embed,
        stack.finalNorm,
        stack.lmHead.map((value) => value * MIRROR_LOGIT_SCALE),
      ]);
      if (kind === "noisy-mirror") expect(weights.layers[0].wq).not.toEqual(models.target.weights.layers[0].wq);
      // So llama.cpp computes the mirror graph's logits, and the scores its p_min cut reads.
      const prompt = testCase.workload.requests[0].prompt.slice(1);
      const tokens = greedyChain(spec, weights, prompt, 8);
      expectMirrorLogits(
        models.spec,
        standaloneRows(models.spec, weights, tokens),
        await mirrorGraphRows(models, tokens),
        `${kind} GGUF draft`,
      );
    });
  }

  it("drafts without a standalone Llama form are left out with a note", () => {
    const testCase = golden("tiny-eagle").cases[0].case;
    for (const kind of ["eagle", "tapped-mirror"] as const) {
      const draft = defaultDraftSpec(kind);
      const files = ggufFiles(loadModels({ ...testCase, draft }), draft);
      expect(files.draft).toBeUndefined();
      expect(files.notes.join(" ")).toMatch(new RegExp(`no standalone draft: ${kind}`));
    }
  });
});
