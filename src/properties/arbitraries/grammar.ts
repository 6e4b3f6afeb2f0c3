// Request grammars (src/sampling/grammar.ts): small automata drawn raw and mapped once the preset is known.
// Each state draws up to four allowed tokens (mostly among the tokens the target emits, so the mask and the
// model's own preferences meet, else any token), where each leads, and its kind: open, accepting (EOS
// allowed) or an end state (accepting, no token: a third of the states, so grammars that finish a request
// inside an accepted run are common). Shrinking goes to one state allowing one token (token 3 forever); a non-accepting state that drew
// no token gets one (no dead ends), and so does the start state (a request emits at least one token).
import fc from "fast-check";
import type { Grammar } from "../../sampling/grammar.ts";
import type { ModelSpec } from "../../model/spec.ts";
import { likelyTokens } from "./likely-tokens.ts";
import { promptToken } from "./model.ts";

export interface GrammarStateDraw {
  /** Raw token draws: below LIKELY_SHARE of the range a likely token, else any token. */
  tokens: number[];
  /** Where each token leads: a multiple of 3 the same state, else the next (absent: the next state). */
  targets: number[];
  /** open: tokens only; accepting: tokens and EOS; end: accepting without tokens (states 0 and 1: accepting). */
  kind: "open" | "accepting" | "end";
}

export type GrammarDraw = GrammarStateDraw[];

const TOKEN_RANGE = 4096;
const LIKELY_SHARE = 2048;
export const MAX_GRAMMAR_STATES_DRAWN = 5;

export const grammarDrawArbitrary: fc.Arbitrary<GrammarDraw> = fc.array(
  fc.record({
    tokens: fc.array(fc.nat({ max: TOKEN_RANGE - 1 }), { maxLength: 4 }),
    targets: fc.array(fc.nat({ max: MAX_GRAMMAR_STATES_DRAWN - 1 }), { maxLength: 4 }),
    // Half open, a third end states, a sixth accepting (EOS, allowed there, ends most requests reaching one).
    kind: fc.nat({ max: 5 }).map(
      (raw) => (["open", "open", "open", "end", "end", "accepting"] as const)[raw],
      (kind) => ({ open: 0, end: 3, accepting: 5 })[kind as "open" | "end" | "accepting"],
    ),
  }),
  { minLength: 1, maxLength: MAX_GRAMMAR_STATES_DRAWN },
);

function tokenOf(spec: ModelSpec, raw: number): number {
  const likely = likelyTokens(spec).filter((token) => token !== spec.eosId);
  return raw < LIKELY_SHARE && likely.length > 0 ? likely[raw % likely.length] : promptToken(spec, raw);
}

/**
 * Where a token leads: this state (a third of the draws) or the next, the next when none was drawn; so a grammar reads as
 * a progression with loops that its end states close after a few tokens (end states come from state 2 on).
 */
function forward(from: number, states: number, raw: number | undefined): number {
  const next = Math.min(from + 1, states - 1);
  return raw === undefined || raw % 3 !== 0 ? next : from;
}

/** The grammar of a draw over the spec's vocabulary (valid by construction: grammarProblem finds nothing). */
export function grammarOf(spec: ModelSpec, draw: GrammarDraw): Grammar {
  const states = draw.length;
  const transitions: [number, number, number][] = [];
  const accepting: number[] = [];
  draw.forEach((state, from) => {
    const seen = new Set<number>();
    const end = state.kind === "end" && from >= 2;
    (end ? [] : state.tokens).forEach((raw, i) => {
      const token = tokenOf(spec, raw);
      if (seen.has(token)) return;
      seen.add(token);
      transitions.push([from, token, forward(from, states, state.targets[i])]);
    });
    if (state.kind !== "open") accepting.push(from);
    // No dead end, and the start is no end state (a request emits at least one token).
    if (seen.size === 0 && !end) transitions.push([from, promptToken(spec, 0), (from + 1) % states]);
  });
  return { states, transitions, accepting };
}
