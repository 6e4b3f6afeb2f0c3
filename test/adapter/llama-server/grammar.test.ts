// A case's token grammar for llama-server (src/adapter/llama-server/grammar.ts): the GBNF over token elements has
// one rule per state whose alternatives are exactly its transitions (plus "" where it accepts), and a reply is read
// in specconf's terms: a finished grammar's single forced EOS dropped, anything else left for the laws. Grammars
// and walks through them are generated (arbitraries/grammar.ts over the tiny preset).
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { gbnfOf, grammarFinish } from "../../../src/adapter/llama-server/grammar.ts";
import { getPreset } from "../../../src/model/presets.ts";
import { grammarDrawArbitrary, grammarOf } from "../../../src/properties/arbitraries/grammar.ts";
import { isEndState, nextState, START_STATE, type Grammar } from "../../../src/sampling/grammar.ts";

const spec = getPreset("tiny");
const grammarArbitrary = grammarDrawArbitrary.map((draw) => grammarOf(spec, draw));

/** A walk from the start: at each step the choice picks one of the state's transitions (stops at an end state). */
function walk(grammar: Grammar, choices: readonly number[]): number[] {
  const tokens: number[] = [];
  let state = START_STATE;
  for (const choice of choices) {
    if (isEndState(grammar, state)) break;
    const out = grammar.transitions.filter(([from]) => from === state);
    if (out.length === 0) break;
    const [, token, to] = out[choice % out.length];
    tokens.push(token);
    state = to;
  }
  return tokens;
}

/** The GBNF's state rules read back (after root): name -> alternatives, each [token, next rule] or "" (empty). */
function readGbnf(text: string): Map<string, (readonly [number, string] | "")[]> {
  const rules = new Map<string, (readonly [number, string] | "")[]>();
  for (const line of text.split("\n").slice(1)) {
    const [name, body] = line.split(" ::= ");
    rules.set(
      name,
      body.split(" | ").map((alternative) => {
        if (alternative === '""') return "";
        const match = /^<\[(\d+)\]> (s\d+)$/.exec(alternative);
        if (!match) throw new Error(`unexpected alternative ${alternative}`);
        return [Number(match[1]), match[2]] as const;
      }),
    );
  }
  return rules;
}

describe("llama-server grammar", () => {
  test.prop([grammarArbitrary])("GBNF: root is the start; each state's alternatives are its transitions", (grammar) => {
    const rules = readGbnf(gbnfOf(grammar));
    expect(gbnfOf(grammar).split("\n")[0]).toBe("root ::= s0");
    expect(rules.size).toBe(grammar.states);
    for (let state = 0; state < grammar.states; state++) {
      const alternatives = rules.get(`s${state}`)!;
      const tokens = alternatives.filter((alternative) => alternative !== "") as (readonly [number, string])[];
      expect(new Map(tokens.map(([token, to]) => [token, Number(to.slice(1))]))).toEqual(
        new Map(grammar.transitions.filter(([from]) => from === state).map(([, token, to]) => [token, to])),
      );
      expect(alternatives.includes("")).toBe(grammar.accepting.includes(state));
    }
  });

  test.prop([grammarArbitrary, fc.array(fc.nat(), { maxLength: 12 })])(
    "a reply: finished at an end state, its one forced EOS dropped; otherwise as the server returned it",
    (grammar, choices) => {
      const tokens = walk(grammar, choices);
      const ended =
        tokens.length > 0 &&
        isEndState(
          grammar,
          tokens.reduce((s, t) => nextState(grammar, s, t), 0),
        );
      const eos = spec.eosId;
      expect(grammarFinish(grammar, tokens, eos)).toEqual({ tokens, finished: ended });
      expect(grammarFinish(grammar, [...tokens, eos], eos)).toEqual(
        ended ? { tokens, finished: true } : { tokens: [...tokens, eos], finished: false },
      );
      // Two EOS, or another token, after the end state: not the forced end; left for grammar acceptance.
      expect(grammarFinish(grammar, [...tokens, eos, eos], eos).finished).toBe(false);
      if (ended)
        expect(grammarFinish(grammar, [...tokens, 3], eos)).toEqual({ tokens: [...tokens, 3], finished: false });
    },
  );
});
