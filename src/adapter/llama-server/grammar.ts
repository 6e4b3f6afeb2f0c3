// A case's token grammar (src/sampling/grammar.ts: a deterministic automaton over token ids) as the GBNF grammar
// llama-server takes in a request's `grammar` field, written with llama.cpp's token elements (`<[ID]>`:
// LLAMA_GRETYPE_TOKEN, src/llama-grammar.h), which match one token id, never text. State i is the rule s<i>; each
// transition [i, token, j] the alternative `<[token]> s<j>`; an accepting state adds the empty alternative "",
// which leaves an empty stack, where llama.cpp allows end-of-generation (llama_grammar_apply_impl: EOG only when
// some stack is empty), as the automaton allows EOS in an accepting state. Every alternative starts with a
// token, so no rule is left-recursive and a stack never grows (the last element of an alternative is a rule
// reference, replaced where it stands). The translation is exact: a token is allowed in llama.cpp's grammar
// state exactly when the automaton allows it, EOS included.
//
// Where the two differ is how a finished grammar ends the request. The automaton's end state (accepting, no
// transition) finishes the request with the token that reaches it (finish reason "stop"). llama.cpp has no such
// finish: its grammar then allows only EOG, so the server samples EOS on its next step and stops on it (stop type
// eos), or stops by its token cap first. `grammarFinish` reads a reply in specconf's terms: the request finished
// at the end-state token, and a single EOS right after it (the server's forced end) is not an output token.
// Anything else (a token after the end state other than that EOS, EOS in a state that does not accept) is left
// as the server returned it, for law "grammar acceptance" to judge.
import { grammarEndIndex, type Grammar } from "../../sampling/grammar.ts";

/** The GBNF grammar of `grammar` over token elements (root is the start state). Pure. */
export function gbnfOf(grammar: Grammar): string {
  const alternatives = Array.from({ length: grammar.states }, () => [] as string[]);
  for (const [from, token, to] of grammar.transitions) alternatives[from].push(`<[${token}]> s${to}`);
  for (const state of new Set(grammar.accepting)) alternatives[state].push('""');
  return ["root ::= s0", ...alternatives.map((alts, state) => `s${state} ::= ${alts.join(" | ")}`)].join("\n");
}

export interface GrammarFinish {
  /** The output tokens: the server's, less the EOS it was forced to sample after the end state. */
  tokens: number[];
  /** True when the tokens reach the grammar's end state at their last token (the request finished there). */
  finished: boolean;
}

/**
 * The server's tokens read in specconf's terms (see the header): finished at the end-state token when the
 * tokens reach it at their last token, or one token before a final EOS (then dropped). Pure.
 */
export function grammarFinish(grammar: Grammar, tokens: readonly number[], eosId: number): GrammarFinish {
  const end = grammarEndIndex(grammar, tokens);
  if (end === tokens.length - 1) return { tokens: [...tokens], finished: true };
  if (end !== undefined && end === tokens.length - 2 && tokens[tokens.length - 1] === eosId)
    return { tokens: tokens.slice(0, -1), finished: true };
  return { tokens: [...tokens], finished: false };
}
