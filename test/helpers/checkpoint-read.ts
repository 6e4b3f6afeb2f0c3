// Reading exported checkpoints back in tests, independently of src/export: a minimal safetensors reader
// (header JSON + offsets; F32, F64, I64, BOOL), HF Linear [out, in] to our [in, out], a Llama decoder layer by
// its HF names, and the argmax and top-1 margin of a logits row.
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import type { LayerWeights } from "../../src/model/weights.ts";

export interface Tensor {
  dtype: string;
  shape: number[];
  values: Float64Array;
}

const WIDTH: Record<string, number> = { F32: 4, F64: 8, I64: 8, BOOL: 1 };

/** Every tensor of the file; asserts each tensor's byte size, that the data section is exactly the tensors, and 8-byte header alignment. */
export function readSafetensors(path: string): Map<string, Tensor> {
  const bytes = readFileSync(path);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString("utf8")) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const base = 8 + headerLength;
  const tensors = new Map<string, Tensor>();
  let covered = 0;
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const [begin, end] = entry.data_offsets;
    const count = entry.shape.reduce((a, b) => a * b, 1);
    const width = WIDTH[entry.dtype];
    expect(end - begin, name).toBe(count * width);
    const values = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const at = base + begin + width * i;
      values[i] =
        entry.dtype === "F32"
          ? bytes.readFloatLE(at)
          : entry.dtype === "F64"
            ? bytes.readDoubleLE(at)
            : entry.dtype === "I64"
              ? Number(bytes.readBigInt64LE(at))
              : bytes.readUInt8(at);
    }
    tensors.set(name, { dtype: entry.dtype, shape: entry.shape, values });
    covered += end - begin;
  }
  expect(base + covered, `${path}: the data section is exactly the tensors`).toBe(bytes.length);
  expect(headerLength % 8).toBe(0);
  return tensors;
}

/** The named tensor; throws naming it when missing. */
export function tensorOf(tensors: ReadonlyMap<string, Tensor>, name: string): Tensor {
  const tensor = tensors.get(name);
  if (!tensor) throw new Error(`missing tensor ${name}`);
  return tensor;
}

/** HF Linear [out, in] -> our [in, out]. */
export function fromLinear(tensor: Tensor): Float64Array {
  const [rows, cols] = tensor.shape; // rows = out, cols = in
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = tensor.values[r * cols + c];
  return out;
}

/** A Llama decoder layer under `prefix` (attnNorm from input_layernorm when present). */
export function layerFrom(tensors: ReadonlyMap<string, Tensor>, prefix: string): LayerWeights {
  const get = (name: string) => tensorOf(tensors, `${prefix}.${name}`);
  return {
    attnNorm: tensors.get(`${prefix}.input_layernorm.weight`)?.values,
    wq: fromLinear(get("self_attn.q_proj.weight")),
    wk: fromLinear(get("self_attn.k_proj.weight")),
    wv: fromLinear(get("self_attn.v_proj.weight")),
    wo: fromLinear(get("self_attn.o_proj.weight")),
    mlpNorm: get("post_attention_layernorm.weight").values,
    wGate: fromLinear(get("mlp.gate_proj.weight")),
    wUp: fromLinear(get("mlp.up_proj.weight")),
    wDown: fromLinear(get("mlp.down_proj.weight")),
  };
}

export function argmaxAndMargin(logits: Float64Array, row: number, vocab: number): { argmax: number; margin: number } {
  let best = 0;
  for (let j = 1; j < vocab; j++) if (logits[row * vocab + j] > logits[row * vocab + best]) best = j;
  let second = -Infinity;
  for (let j = 0; j < vocab; j++) if (j !== best) second = Math.max(second, logits[row * vocab + j]);
  return { argmax: best, margin: logits[row * vocab + best] - second };
}
