// Hidden-state rows travel with their provenance (the event and row that produced each), so the trace
// can say where every hidden input came from, including when a bug feeds the wrong rows. EAGLE-3 drafts
// are fed auxiliary states instead: AuxRows, each row the concatenation of several target residual streams,
// each part with its own provenance (event, row, layer, and which side of the final norm it was read on).
import type { FloatArray } from "../runtime/ort.ts";

export interface Provenance {
  event: number;
  row: number;
}

/** One auxiliary state of an EAGLE-3 input row. */
export interface AuxSource extends Provenance {
  /** The residual stream, numbered as checkpoint ids: k is the input of layer k (0: the embeddings; layers: the last output). */
  layer: number;
  /** Read after the final norm (the LM-head input) rather than from the residual stream. */
  normed: boolean;
}

export class HiddenRows {
  readonly kind = "hidden" as const;

  constructor(
    readonly width: number,
    readonly values: FloatArray,
    readonly provenance: readonly Provenance[],
  ) {
    if (values.length !== width * provenance.length)
      throw new Error(`hidden rows: ${values.length} values for ${provenance.length} rows of ${width}`);
  }

  get count(): number {
    return this.provenance.length;
  }

  /** Rows of one forward's hidden output, tagged with that event. */
  static fromForward(width: number, values: FloatArray, event: number, rows: readonly number[]): HiddenRows {
    const out = new (values.constructor as { new (n: number): FloatArray })(rows.length * width);
    rows.forEach((row, i) => out.set(values.subarray(row * width, (row + 1) * width), i * width));
    return new HiddenRows(
      width,
      out,
      rows.map((row) => ({ event, row })),
    );
  }

  select(indices: readonly number[]): HiddenRows {
    const out = new (this.values.constructor as { new (n: number): FloatArray })(indices.length * this.width);
    indices.forEach((index, i) =>
      out.set(this.values.subarray(index * this.width, (index + 1) * this.width), i * this.width),
    );
    return new HiddenRows(
      this.width,
      out,
      indices.map((index) => this.provenance[index]),
    );
  }

  /** Rows of several parts, in order; the array type (float32/64) is the parts'. Needs at least one part. */
  static concat(width: number, parts: readonly HiddenRows[]): HiddenRows {
    if (parts.length === 0) throw new Error("hidden rows: nothing to concatenate");
    const total = parts.reduce((sum, part) => sum + part.count, 0);
    const out = new (parts[0].values.constructor as { new (n: number): FloatArray })(total * width);
    let offset = 0;
    for (const part of parts) {
      out.set(part.values, offset * width);
      offset += part.count;
    }
    return new HiddenRows(
      width,
      out,
      parts.flatMap((part) => part.provenance),
    );
  }
}

/** EAGLE-3 input rows: [rows, auxLayers * H], each row's parts with their sources. */
export class AuxRows {
  readonly kind = "aux" as const;

  constructor(
    readonly width: number,
    readonly values: FloatArray,
    readonly provenance: readonly (readonly AuxSource[])[],
  ) {
    if (values.length !== width * provenance.length)
      throw new Error(`aux rows: ${values.length} values for ${provenance.length} rows of ${width}`);
  }

  get count(): number {
    return this.provenance.length;
  }

  select(indices: readonly number[]): AuxRows {
    const out = new (this.values.constructor as { new (n: number): FloatArray })(indices.length * this.width);
    indices.forEach((index, i) =>
      out.set(this.values.subarray(index * this.width, (index + 1) * this.width), i * this.width),
    );
    return new AuxRows(
      this.width,
      out,
      indices.map((index) => this.provenance[index]),
    );
  }
}

/** What a draft-extend row is fed: a hidden state (EAGLE, mirrors) or auxiliary states (EAGLE-3). */
export type DraftInputRows = HiddenRows | AuxRows;

/** Rows of several parts of one kind, in order. Needs at least one part. */
export function concatInputRows(parts: readonly DraftInputRows[]): DraftInputRows {
  if (parts.length === 0) throw new Error("draft input rows: nothing to concatenate");
  const first = parts[0];
  if (first.kind === "hidden") {
    if (parts.some((part) => part.kind !== "hidden")) throw new Error("draft input rows: mixed kinds");
    return HiddenRows.concat(first.width, parts as HiddenRows[]);
  }
  const total = parts.reduce((sum, part) => sum + part.count, 0);
  const out = new (first.values.constructor as { new (n: number): FloatArray })(total * first.width);
  let offset = 0;
  for (const part of parts) {
    if (part.kind !== "aux" || part.width !== first.width) throw new Error("draft input rows: mixed kinds");
    out.set(part.values, offset * first.width);
    offset += part.count;
  }
  return new AuxRows(
    first.width,
    out,
    parts.flatMap((part) => part.provenance as AuxSource[][]),
  );
}
