// A detokenized request's text as the engine produces it (issue 28, item 2; the conventions are in
// src/sampling/stop-strings.ts): each emitted token's piece is appended and checked at once for a stop string
// ending in it, so a stop anywhere inside a multi-token accepted run ends the request at its token; each step's
// emit streams one delta (the text that became final, held back while it may still be a stop string's start).
// Fault sites: stop strings checked only once per round, on the run's tail (sglang#23802 / #27637), a step's
// delta carrying only its last token (vllm#26027), the first stop string in list order winning within a token,
// and an aborted stream dropping the text it held back (issue 34).
import type { Faults } from "../case/faults.ts";
import type { Vocabulary } from "../model/vocabulary.ts";
import { finalText, heldBack, type StopOccurrence, type TextOptions } from "../sampling/stop-strings.ts";
import type { TextDelta } from "../trace/outputs-line.ts";

export class TextStream {
  /** The output tokens' pieces concatenated (before any stop string cut). */
  private text = "";
  /** ends[i]: the text's length through output token i. */
  private readonly ends: number[] = [];
  /** The stop string occurrence that ended the request, once found. */
  occurrence: StopOccurrence | undefined;
  /** Characters of the output text already streamed. */
  private sent = 0;
  readonly deltas: TextDelta[] = [];
  /** Completion tokens as usage reports them: one per emitted token (the usage-counts-verified-run fault: per candidate). */
  completionTokens = 0;
  private readonly longestStop: number;

  constructor(
    private readonly vocabulary: Vocabulary,
    private readonly options: TextOptions,
    private readonly faults: Faults,
  ) {
    this.longestStop = Math.max(0, ...options.stops.map((stop) => stop.length));
  }

  /** The output text: cut at the stop string occurrence once one ended the request. */
  get output(): string {
    return finalText(this.text, this.occurrence, this.options.include);
  }

  /**
   * Appends one emitted token's piece; true when a stop string occurrence ends inside it (the request ends with
   * this token). Only occurrences ending in this token's text are new: earlier ones were checked with their own
   * token. Mutates.
   */
  append(token: number): boolean {
    const before = this.text.length;
    this.text += this.vocabulary.pieces[token] ?? "";
    this.ends.push(this.text.length);
    // sglang#23802 / #27637: the stop strings wait for the round's end (checkRoundEnd).
    if (this.faults.has("stop-string-checked-at-round-end")) return false;
    if (this.ends.length <= this.options.minNewTokens) return false;
    return this.search(Math.max(0, before + 1 - this.longestStop), before + 1);
  }

  /**
   * The stop-string-checked-at-round-end fault: once per emitted run, the stop strings are searched in the text's
   * tail only, from the longest stop string's length before the run's last token: an occurrence earlier in the
   * run is missed (the request goes on), one before the last token but within the tail is found late (the text
   * cut there, the tokens after it kept). Mutates.
   */
  checkRoundEnd(): boolean {
    if (this.ends.length <= this.options.minNewTokens || this.ends.length === 0) return false;
    const lastStart = this.ends.length > 1 ? this.ends[this.ends.length - 2] : 0;
    return this.search(Math.max(0, lastStart + 1 - this.longestStop), 0);
  }

  /** Finds the first occurrence starting at `from` or later that ends past `endsAfter`; records it. */
  private search(from: number, endsAfter: number): boolean {
    let best: { stop: string; start: number; end: number } | undefined;
    // The stop-strings-by-list-order fault: the first stop string found, in the request's order, wins.
    const byList = this.faults.has("stop-strings-by-list-order");
    for (const stop of this.options.stops) {
      const start = this.text.indexOf(stop, Math.max(from, endsAfter - stop.length));
      if (start < 0) continue;
      const end = start + stop.length;
      if (!best || (!byList && (end < best.end || (end === best.end && start < best.start))))
        best = { stop, start, end };
    }
    if (!best) return false;
    this.occurrence = { ...best, tokenIndex: this.ends.length - 1 };
    return true;
  }

  /**
   * The delta one step streams for the tokens it emitted: the text that became final (all of it once the request
   * finished; while it runs, all but a tail that may still be a stop string's start). Mutates.
   */
  stream(emitted: readonly number[], finished: boolean, candidates = emitted.length): void {
    // sglang#39826: the run's verified tokens counted, not those emitted after the cut.
    this.completionTokens += this.faults.has("usage-counts-verified-run") ? candidates : emitted.length;
    const released = finished ? this.output : this.text.slice(0, this.text.length - heldBack(this.text, this.options));
    const text = released.slice(this.sent);
    this.sent = Math.max(this.sent, released.length);
    // vllm#26027: a step's delta carries its last token only (and that token's text).
    if (this.faults.has("stream-delta-last-token") && emitted.length > 1) {
      const last = emitted[emitted.length - 1];
      this.deltas.push({ text: this.vocabulary.pieces[last] ?? "", tokens: [last] });
      return;
    }
    this.deltas.push({ text, tokens: [...emitted] });
  }

  /** The deltas as a finished run reports them: a last one releasing what was held when the request ended otherwise. */
  finalDeltas(aborted = false): TextDelta[] {
    // The held-text-dropped-on-abort fault: an aborted stream closes on what it had sent.
    if (aborted && this.faults.has("held-text-dropped-on-abort")) return [...this.deltas];
    const rest = this.output.slice(this.sent);
    return rest.length > 0 ? [...this.deltas, { text: rest, tokens: [] }] : [...this.deltas];
  }
}
