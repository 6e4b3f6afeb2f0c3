// A request slot's drafter state (engine.requestSlots): what a drafter keeps per slot rather than per request,
// as llama.cpp's server keeps a prompt-lookup n-gram context per slot (common_speculative's ngram cache with its
// ingested-prompt watermark). Prompt lookup proposes from this history: the tokens it has ingested, x_0..x_{L-1}
// of the request on the slot. A request taking the slot begins it afresh; a retract rolls it back. The fault
// "drafter-state-kept-on-slot-reuse" makes begin() a no-op (llama.cpp#27852): a request on a reused slot
// ingests only its tokens past the previous request's watermark, and its drafts come from that request's tokens.
import type { Faults } from "../case/faults.ts";

export class SlotDrafter {
  private readonly history: number[] = [];
  /** Tokens ingested so far (llama.cpp's cache_size): the history's length. */
  private ingested = 0;

  /** A request takes the slot: its history starts empty (the fault's one site). Mutates. */
  begin(faults: Faults): void {
    if (faults.has("drafter-state-kept-on-slot-reuse")) return;
    this.history.length = 0;
    this.ingested = 0;
  }

  /** A retract: the request re-prefills from position 0, and its history is ingested again. Mutates. */
  rollBack(): void {
    this.history.length = 0;
    this.ingested = 0;
  }

  /**
   * The history prompt lookup proposes from, once it has ingested the request's verified tokens x_0..x_{L-1}
   * (`tokens`, `verified` = L): the tokens past the watermark are appended (llama.cpp ingests a prompt only
   * while its watermark is below it). Mutates.
   */
  historyOf(tokens: readonly number[], verified: number): readonly number[] {
    for (let i = this.ingested; i < verified; i++) this.history.push(tokens[i]);
    this.ingested = Math.max(this.ingested, verified);
    return this.history;
  }
}
