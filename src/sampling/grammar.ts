// A request's token-level grammar: a deterministic finite automaton over token ids, the form grammar engines
// compile JSON schemas and EBNF into before they mask logits (xgrammar's token bitmask, llama.cpp's grammar
// sampler, vLLM's structured outputs: vllm#48197). State 0 is the start. In a state the allowed tokens are
// those with a transition, plus EOS where the state accepts; every other token's logit is -inf, at every
// target row and in drafting. A state that accepts and has no transition is an end state: reaching it
// finishes the request there (finish reason "stop"), wherever it falls inside an accepted run. A token the
// automaton has no transition for leads to DEAD_STATE (only EOS allowed): an engine never takes one, but
// a law that replays an output through the automaton must be able to say where it went wrong.
// Pure; the engine's per-request matcher (src/engine/grammar-matcher.ts) and the laws share it.
import { Type, type Static } from "@sinclair/typebox";

const INT32_MAX = 2 ** 31 - 1;
/** Bounds that keep a case's grammar small enough to check per row (the schema's limits). */
export const MAX_GRAMMAR_STATES = 256;
export const MAX_GRAMMAR_TRANSITIONS = 4096;

export const GrammarSchema = Type.Object(
  {
    states: Type.Integer({
      minimum: 1,
      maximum: MAX_GRAMMAR_STATES,
      description: "States 0..states-1; 0 is the start.",
    }),
    transitions: Type.Array(
      Type.Tuple(
        [
          Type.Integer({ minimum: 0, maximum: INT32_MAX, description: "The state it leaves (from)." }),
          Type.Integer({ minimum: 0, maximum: INT32_MAX, description: "The token allowed there." }),
          Type.Integer({ minimum: 0, maximum: INT32_MAX, description: "The state it leads to (to)." }),
        ],
        { description: "One transition [from, token, to]." },
      ),
      {
        maxItems: MAX_GRAMMAR_TRANSITIONS,
        description:
          "[from, token, to]: in state `from`, `token` is allowed and leads to `to` (at most one per from and token).",
      },
    ),
    accepting: Type.Array(Type.Integer({ minimum: 0, maximum: INT32_MAX }), {
      maxItems: MAX_GRAMMAR_STATES,
      description: "Accepting states: EOS is allowed there; one without transitions ends the request when reached.",
    }),
  },
  { additionalProperties: false },
);

export type Grammar = Static<typeof GrammarSchema>;

/** The state after a token the automaton has no transition for. */
export const DEAD_STATE = -1;
export const START_STATE = 0;

interface Compiled {
  /** next[state]: token -> state. */
  next: Map<number, number>[];
  accepting: Set<number>;
}

const compiled = new WeakMap<Grammar, Compiled>();

function compile(grammar: Grammar): Compiled {
  let entry = compiled.get(grammar);
  if (entry) return entry;
  const next = Array.from({ length: grammar.states }, () => new Map<number, number>());
  for (const [from, token, to] of grammar.transitions) next[from]?.set(token, to);
  entry = { next, accepting: new Set(grammar.accepting) };
  compiled.set(grammar, entry);
  return entry;
}

/** The state after `token` in `state` (DEAD_STATE when not allowed; EOS leads nowhere: DEAD_STATE). Pure. */
export function nextState(grammar: Grammar, state: number, token: number): number {
  if (state < 0) return DEAD_STATE;
  return compile(grammar).next[state]?.get(token) ?? DEAD_STATE;
}

/** The state after `tokens` from `state`. Pure. */
export function stateAfter(grammar: Grammar, state: number, tokens: readonly number[]): number {
  let current = state;
  for (const token of tokens) current = nextState(grammar, current, token);
  return current;
}

export function isAccepting(grammar: Grammar, state: number): boolean {
  return state >= 0 && compile(grammar).accepting.has(state);
}

/** An accepting state without transitions: the request is finished once it is reached. */
export function isEndState(grammar: Grammar, state: number): boolean {
  return isAccepting(grammar, state) && compile(grammar).next[state].size === 0;
}

/** Whether `token` may be sampled in `state`: a transition, or EOS in an accepting (or dead) state. */
export function isAllowed(grammar: Grammar, state: number, token: number, eosId: number): boolean {
  if (token === eosId) return state < 0 || isAccepting(grammar, state);
  return nextState(grammar, state, token) !== DEAD_STATE;
}

/** Mutates: every token not allowed in `state` gets -inf (the bitmask engines apply before processing). */
export function applyGrammarMask(row: Float64Array, grammar: Grammar, state: number, eosId: number): void {
  const allowed = state >= 0 ? compile(grammar).next[state] : undefined;
  const eosAllowed = state < 0 || isAccepting(grammar, state);
  for (let token = 0; token < row.length; token++) {
    if (token === eosId ? !eosAllowed : !allowed?.has(token)) row[token] = -Infinity;
  }
}

export interface GrammarViolation {
  /** Output index of the first token the grammar does not accept there. */
  index: number;
  message: string;
}

/**
 * The first output token the grammar rejects: a token without a transition, EOS in a non-accepting state, or
 * any token after the grammar reached an end state (the request had finished). Pure.
 */
export function grammarViolation(
  grammar: Grammar,
  output: readonly number[],
  eosId: number,
): GrammarViolation | undefined {
  let state = START_STATE;
  for (const [index, token] of output.entries()) {
    if (isEndState(grammar, state))
      return { index, message: `output token ${index} (${token}) follows the grammar's end state ${state}` };
    if (!isAllowed(grammar, state, token, eosId))
      return {
        index,
        message: `output token ${index} (${token}) is not allowed in grammar state ${state}${token === eosId ? " (EOS in a state that does not accept)" : ""}`,
      };
    if (token === eosId)
      return index + 1 < output.length
        ? { index: index + 1, message: `output token ${index + 1} follows EOS` }
        : undefined;
    state = nextState(grammar, state, token);
  }
  return undefined;
}

/** The output index at which the grammar reaches an end state (the request ends with that token), if any. Pure. */
export function grammarEndIndex(grammar: Grammar, output: readonly number[]): number | undefined {
  let state = START_STATE;
  for (const [index, token] of output.entries()) {
    state = nextState(grammar, state, token);
    if (state < 0) return undefined;
    if (isEndState(grammar, state)) return index;
  }
  return undefined;
}

/** What the schema cannot say: states in range, one transition per state and token, no dead end. Pure. */
export function grammarProblem(
  grammar: Grammar,
  vocab: number,
  eosId: number,
): { path: string; message: string } | undefined {
  const seen = new Set<string>();
  const outgoing = new Set<number>();
  for (const [i, [from, token, to]] of grammar.transitions.entries()) {
    const path = `/transitions/${i}`;
    if (from >= grammar.states)
      return { path: `${path}/0`, message: `state ${from} is not below states (${grammar.states})` };
    if (to >= grammar.states)
      return { path: `${path}/2`, message: `state ${to} is not below states (${grammar.states})` };
    if (token >= vocab) return { path: `${path}/1`, message: `token ${token} is outside the vocabulary (${vocab})` };
    if (token === eosId)
      return { path: `${path}/1`, message: `EOS (${eosId}) is allowed by accepting states, not by a transition` };
    const key = `${from}:${token}`;
    if (seen.has(key)) return { path, message: `a second transition from state ${from} on token ${token}` };
    seen.add(key);
    outgoing.add(from);
  }
  const accepting = new Set<number>();
  for (const [i, state] of grammar.accepting.entries()) {
    if (state >= grammar.states)
      return { path: `/accepting/${i}`, message: `state ${state} is not below states (${grammar.states})` };
    accepting.add(state);
  }
  if (accepting.has(START_STATE) && !outgoing.has(START_STATE))
    return {
      path: "/accepting",
      message: "the start state 0 is an end state (only the empty output, but a request emits a token)",
    };
  for (let state = 0; state < grammar.states; state++)
    if (!accepting.has(state) && !outgoing.has(state))
      return { path: "/accepting", message: `state ${state} neither accepts nor has a transition (a dead end)` };
  return undefined;
}
