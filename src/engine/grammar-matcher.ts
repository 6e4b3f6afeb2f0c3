// A request's grammar matcher, kept incrementally as engines keep it (xgrammar's GrammarMatcher in vLLM and
// SGLang, llama.cpp's grammar sampler): the automaton's state after the emitted output. A row's mask state is
// this state advanced over the tokens the row's context holds beyond it (under overlap the tokens in flight,
// in verify the drafts on the row's path, in drafting the node's draft path), never stored back: only
// emitted tokens advance the matcher, one at a time, so a grammar that ends inside an accepted run ends the
// request there. Retract keeps it (resume does not resample). The fault "grammar-advanced-by-rejected-drafts"
// (llama.cpp test_spec_checkpoint_sampler.py: grammar state not restored with the checkpoint; vllm#44297)
// leaves the matcher where drafting took it: through the whole draft chain, then the round's last token.
import type { Faults } from "../case/faults.ts";
import { isEndState, nextState, START_STATE, stateAfter, type Grammar } from "../sampling/grammar.ts";

export class GrammarMatcher {
  /** The state after the emitted output (DEAD_STATE only under a fault). */
  state = START_STATE;

  constructor(readonly grammar: Grammar) {}

  /** The mask state of a row whose context holds the emitted output plus `tokens`. Pure. */
  stateWith(tokens: readonly number[]): number {
    return tokens.length === 0 ? this.state : stateAfter(this.grammar, this.state, tokens);
  }

  /** Mutates: one emitted token. True when the grammar has reached its end (the request finishes here). */
  advance(token: number): boolean {
    this.state = nextState(this.grammar, this.state, token);
    return isEndState(this.grammar, this.state);
  }

  /**
   * Mutates, under the fault only: after a round that rejected drafts, the state drafting left (the round's
   * starting state advanced over its whole draft chain) advanced by the round's last emitted token where
   * the automaton allows it, as if the rejected drafts had been accepted.
   */
  afterRound(
    startState: number,
    draftChain: readonly number[],
    acceptedDrafts: number,
    emitted: readonly number[],
    faults: Faults,
  ): void {
    if (!faults.has("grammar-advanced-by-rejected-drafts") || acceptedDrafts >= draftChain.length) return;
    if (emitted.length === 0) return;
    const drafted = stateAfter(this.grammar, startState, draftChain);
    // A fault must corrupt, not crash: a chain the automaton cannot follow leaves the correct state.
    if (drafted < 0) return;
    const last = nextState(this.grammar, drafted, emitted[emitted.length - 1]);
    this.state = last < 0 ? drafted : last;
  }
}
