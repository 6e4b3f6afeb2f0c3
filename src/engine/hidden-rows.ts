// Hidden-state rows travel with their provenance (the event and row that produced each), so the trace
// can say where every hidden input came from, including when a bug feeds the wrong rows.
import type { FloatArray } from "../runtime/ort.ts";

export interface Provenance {
  event: number;
  row: number;
}

export class HiddenRows {
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
