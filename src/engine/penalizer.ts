// A request's penalizer state, kept incrementally as engines keep it (SGLang's penalizer orchestrator,
// vLLM's output token bins): how often each output token was committed and how many output tokens were
// committed. A row's processing context is this state extended by the drafts on its verify path (they
// are committed if the row's prediction is used). The state is updated once per emitted token; two
// faults update it once per step instead (sglang PR 33643).
import type { Faults } from "../case/faults.ts";
import type { ProcessingContext } from "../sampling/process-logits.ts";

export class Penalizer {
  private readonly counts = new Map<number, number>();
  private committed = 0;
  private readonly prompt: ReadonlySet<number>;

  constructor(prompt: readonly number[]) {
    this.prompt = new Set(prompt);
  }

  /** The context of a row whose committed output is the state's plus `pathTokens` (verify: the node's drafts). */
  contextWith(pathTokens: readonly number[]): ProcessingContext {
    if (pathTokens.length === 0) return { prompt: this.prompt, outputCounts: this.counts, committed: this.committed };
    const outputCounts = new Map(this.counts);
    for (const token of pathTokens) outputCounts.set(token, (outputCounts.get(token) ?? 0) + 1);
    return { prompt: this.prompt, outputCounts, committed: this.committed + pathTokens.length };
  }

  /** Mutates: counts the tokens one step emitted. */
  cumulate(emitted: readonly number[], faults: Faults): void {
    const counted = faults.has("penalties-per-step") ? emitted.slice(-1) : emitted;
    for (const token of counted) this.counts.set(token, (this.counts.get(token) ?? 0) + 1);
    this.committed += faults.has("min-tokens-per-step") ? Math.min(1, emitted.length) : emitted.length;
  }
}
