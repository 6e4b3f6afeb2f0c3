// Accept-length histograms as inline SVG bars: for each run, how many verify rounds accepted 1, 2, ..., S + 1
// tokens (the root counted), the count on each bar. A broken drafter shows here before any output changes.
import { escapeHtml } from "./escape.ts";
import type { Trace } from "../../trace/schema.ts";

export function acceptLengths(trace: Trace): Map<number, number> {
  const counts = new Map<number, number>();
  for (const event of trace.events)
    for (const result of event.verify ?? [])
      if (!result.discarded) counts.set(result.acceptLen, (counts.get(result.acceptLen) ?? 0) + 1);
  return counts;
}

export function histogramSvg(title: string, counts: ReadonlyMap<number, number>, maxLen: number): string {
  const lengths = Array.from({ length: Math.max(maxLen, ...counts.keys(), 1) }, (_, i) => i + 1);
  const top = Math.max(1, ...counts.values());
  const bar = 34;
  const height = 120;
  const width = 20 + lengths.length * (bar + 10);
  const bars = lengths.map((length, i) => {
    const count = counts.get(length) ?? 0;
    const h = Math.round((count / top) * (height - 40));
    const x = 10 + i * (bar + 10);
    return (
      `<g class="bar" data-accept-len="${length}" data-count="${count}">` +
      `<rect x="${x}" y="${height - 20 - h}" width="${bar}" height="${h}"/>` +
      `<text x="${x + bar / 2}" y="${height - 24 - h}" text-anchor="middle">${count}</text>` +
      `<text x="${x + bar / 2}" y="${height - 6}" text-anchor="middle">${length}</text></g>`
    );
  });
  return (
    `<figure class="histogram"><figcaption>${escapeHtml(title)}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="accept lengths: ${escapeHtml(title)}">${bars.join("")}</svg></figure>`
  );
}
