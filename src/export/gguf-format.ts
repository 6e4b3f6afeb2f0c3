// A GGUF v3 container writer (the file format llama.cpp loads; ggml docs/gguf.md): the magic "GGUF", version
// 3, the tensor and metadata counts, metadata key/value pairs, tensor infos (name, dims innermost first,
// ggml type, offset into the data section), padding to the alignment, then the tensor data, each tensor
// starting on an alignment boundary. Everything is little-endian; strings are a u64 byte length and UTF-8.
// Only what specconf writes is supported: F32 tensors (I64 for EAGLE-3's d2t) and scalar / array metadata of a
// few types.

/** general.alignment's default; we write it explicitly too. */
export const GGUF_ALIGNMENT = 32;
const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
const GGUF_VERSION = 3;
/** ggml_type codes of the tensor types written: F32, and I64 (EAGLE-3's d2t, absolute target ids). */
const GGML_TYPE = { F32: 0, I64: 27 } as const;
const TYPE_BYTES = { F32: 4, I64: 8 } as const;

/** gguf_metadata_value_type codes. */
const VALUE_TYPE = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;

export type GgufValue =
  | { type: "uint32"; value: number }
  | { type: "int32"; value: number }
  | { type: "float32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "array"; items: "string"; value: readonly string[] }
  | { type: "array"; items: "int32" | "uint32"; value: ArrayLike<number> };

export interface GgufTensor {
  name: string;
  /** ggml ne: the innermost (contiguous) dimension first. */
  dims: readonly number[];
  /** The values in memory order, rounded to float32 on write (F32) or written as 64-bit integers (I64). */
  data: ArrayLike<number>;
  /** Default F32. */
  type?: keyof typeof GGML_TYPE;
}

/** A growable little-endian byte buffer. */
class ByteSink {
  private bytes = new Uint8Array(1 << 16);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private reserve(count: number): number {
    if (this.length + count > this.bytes.length) {
      let size = this.bytes.length * 2;
      while (size < this.length + count) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
      this.view = new DataView(grown.buffer);
    }
    const at = this.length;
    this.length += count;
    return at;
  }

  u32(value: number): void {
    this.view.setUint32(this.reserve(4), value, true);
  }
  i32(value: number): void {
    this.view.setInt32(this.reserve(4), value, true);
  }
  u64(value: number): void {
    this.view.setBigUint64(this.reserve(8), BigInt(value), true);
  }
  f32(value: number): void {
    this.view.setFloat32(this.reserve(4), value, true);
  }
  u8(value: number): void {
    this.view.setUint8(this.reserve(1), value);
  }
  string(value: string): void {
    const encoded = Buffer.from(value, "utf8");
    this.u64(encoded.length);
    this.bytes.set(encoded, this.reserve(encoded.length));
  }
  padTo(alignment: number): void {
    const pad = (alignment - (this.length % alignment)) % alignment;
    this.reserve(pad); // zero bytes: the buffer starts zeroed and only grows
  }
  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  switch (value.type) {
    case "uint32":
      return sink.u32(value.value);
    case "int32":
      return sink.i32(value.value);
    case "float32":
      return sink.f32(value.value);
    case "bool":
      return sink.u8(value.value ? 1 : 0);
    case "string":
      return sink.string(value.value);
    case "array": {
      sink.u32(VALUE_TYPE[value.items]);
      sink.u64(value.value.length);
      if (value.items === "string") for (const item of value.value as readonly string[]) sink.string(item);
      else {
        const numbers = value.value as ArrayLike<number>;
        for (let i = 0; i < numbers.length; i++)
          if (value.items === "int32") sink.i32(numbers[i]);
          else sink.u32(numbers[i]);
      }
    }
  }
}

function elementCount(tensor: GgufTensor): number {
  return tensor.dims.reduce((product, dim) => product * dim, 1);
}

/** The GGUF bytes of `metadata` (in insertion order) and F32 `tensors` (in the given order). */
export function writeGguf(metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensor[]): Uint8Array {
  const names = new Set<string>();
  for (const tensor of tensors) {
    if (names.has(tensor.name)) throw new Error(`gguf: duplicate tensor name ${tensor.name}`);
    names.add(tensor.name);
    if (elementCount(tensor) !== tensor.data.length)
      throw new Error(
        `gguf: ${tensor.name}: dims [${tensor.dims}] hold ${elementCount(tensor)} values, got ${tensor.data.length}`,
      );
  }
  const entries = new Map(metadata);
  entries.set("general.alignment", { type: "uint32", value: GGUF_ALIGNMENT });
  const sink = new ByteSink();
  sink.u32(GGUF_MAGIC);
  sink.u32(GGUF_VERSION);
  sink.u64(tensors.length);
  sink.u64(entries.size);
  for (const [key, value] of entries) {
    sink.string(key);
    sink.u32(VALUE_TYPE[value.type]);
    writeValue(sink, value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const tensor of tensors) {
    sink.string(tensor.name);
    sink.u32(tensor.dims.length);
    for (const dim of tensor.dims) sink.u64(dim);
    sink.u32(GGML_TYPE[tensor.type ?? "F32"]);
    sink.u64(offset);
    offsets.push(offset);
    offset += Math.ceil((elementCount(tensor) * TYPE_BYTES[tensor.type ?? "F32"]) / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
  }
  sink.padTo(GGUF_ALIGNMENT);
  const dataStart = sink.length;
  const out = new Uint8Array(dataStart + offset);
  out.set(sink.result());
  const view = new DataView(out.buffer);
  tensors.forEach((tensor, t) => {
    let at = dataStart + offsets[t];
    if (tensor.type === "I64")
      for (let i = 0; i < tensor.data.length; i++, at += 8) view.setBigInt64(at, BigInt(tensor.data[i]), true);
    else for (let i = 0; i < tensor.data.length; i++, at += 4) view.setFloat32(at, tensor.data[i], true);
  });
  return out;
}
