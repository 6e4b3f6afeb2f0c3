// A safetensors writer (https://github.com/huggingface/safetensors, format section): an 8-byte
// little-endian header length, a JSON header { name: { dtype, shape, data_offsets: [begin, end] },
// "__metadata__": { string: string } } padded with spaces to a multiple of 8 bytes, then the tensors'
// little-endian bytes back to back in header order. No dependency: the npm package of that name is a stub.

export type SafetensorsDtype = "F32" | "F64" | "I64" | "BOOL";

export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Row-major values (rounded to float32 for F32; integers for I64; 0 or 1 for BOOL). */
  data: ArrayLike<number>;
}

const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F64: 8, I64: 8, BOOL: 1 };

export function writeSafetensors(tensors: readonly TensorEntry[], metadata: Record<string, string> = {}): Uint8Array {
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  const names = new Set<string>();
  for (const tensor of sorted) {
    if (names.has(tensor.name)) throw new Error(`duplicate tensor name ${tensor.name}`);
    names.add(tensor.name);
    const count = tensor.shape.reduce((product, dim) => product * dim, 1);
    if (count !== tensor.data.length)
      throw new Error(`${tensor.name}: shape [${tensor.shape}] holds ${count} values, got ${tensor.data.length}`);
    const size = count * BYTES[tensor.dtype];
    header[tensor.name] = { dtype: tensor.dtype, shape: tensor.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  let json = JSON.stringify(header);
  const headerBytes = Buffer.byteLength(json, "utf8");
  json += " ".repeat((8 - ((8 + headerBytes) % 8)) % 8);
  const headerBuffer = Buffer.from(json, "utf8");
  const out = new Uint8Array(8 + headerBuffer.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBuffer.length), true);
  out.set(headerBuffer, 8);
  let at = 8 + headerBuffer.length;
  for (const tensor of sorted) {
    const { data } = tensor;
    if (tensor.dtype === "F32") for (let i = 0; i < data.length; i++, at += 4) view.setFloat32(at, data[i], true);
    else if (tensor.dtype === "F64") for (let i = 0; i < data.length; i++, at += 8) view.setFloat64(at, data[i], true);
    else if (tensor.dtype === "I64")
      for (let i = 0; i < data.length; i++, at += 8) view.setBigInt64(at, BigInt(data[i]), true);
    else for (let i = 0; i < data.length; i++, at += 1) view.setUint8(at, data[i] ? 1 : 0);
  }
  return out;
}

/** [rows, cols] row-major -> [cols, rows] row-major (our y = x W matrices to HF Linear weights [out, in]). */
export function transpose(values: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c];
  return out;
}
