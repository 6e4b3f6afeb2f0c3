// Small helpers for scripts/bench-engine.ts: a seeded prompt generator, order statistics and table
// formatting. No engine imports here.

/**
 * Deterministic 32-bit linear congruential generator (Numerical Recipes constants:
 * x' = (1664525 x + 1013904223) mod 2^32). Not for statistics, only for reproducible prompts:
 * the same seed gives the same prompts on every machine and Node version.
 */
export class Lcg {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (Math.imul(this.state, 1664525) + 1013904223) >>> 0;
    return this.state;
  }

  /** Integer in [lo, hi). Uses the high bits (the low bits of an LCG are weak). */
  int(lo: number, hi: number): number {
    return lo + ((this.next() >>> 8) % (hi - lo));
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : sum(values) / values.length;
}

/** Renders rows as an aligned text table; numbers are expected to be pre-formatted strings. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

export const fmt = {
  us: (ms: number) => (Number.isFinite(ms) ? (ms * 1000).toFixed(1) : "-"),
  ms: (ms: number) => (Number.isFinite(ms) ? ms.toFixed(2) : "-"),
  x: (ratio: number) => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : "-"),
  n: (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "-"),
  pct: (fraction: number) => (Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : "-"),
};
