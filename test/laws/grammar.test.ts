// Grammar-constrained speculation end to end on hand-built cases: the engine's outputs are accepted by their
// grammars and equal the masked target-only run; a grammar ending inside an accepted run ends the request
// there; the grammar laws fail on corrupted outputs and traces; the coverage corners are found where built.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { coverageLabels } from "../../src/check/coverage.ts";
import { checkGrammarAcceptance } from "../../src/laws/grammar-acceptance.ts";
import { checkGrammarState } from "../../src/laws/grammar-state.ts";
import { defaultDraftSpec, type DraftKind } from "../../src/model/spec.ts";
import { getPreset } from "../../src/model/presets.ts";
import type { Grammar } from "../../src/sampling/grammar.ts";
import { checkRun } from "../helpers/check-run.ts";

const PROMPT = [1, 5, 9, 13, 17, 3];
const EOS = getPreset("tiny").eosId;

function grammarCase(draft: DraftKind, grammar: Grammar | undefined, maxNewTokens = 8, numSteps = 3): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(draft),
    engine: defaultEngineConfig({ numSteps, numDraftTokens: numSteps + 1, poolSlots: 512 }),
    workload: {
      requests: [
        { id: 0, prompt: PROMPT, maxNewTokens, arrivalStep: 0, ...(grammar ? { sampling: { grammar } } : {}) },
      ],
      aborts: [],
    },
  };
}

/** A chain grammar accepting exactly `tokens`, then its end state. */
function chainGrammar(tokens: readonly number[]): Grammar {
  return {
    states: tokens.length + 1,
    transitions: tokens.map((token, i): [number, number, number] => [i, token, i + 1]),
    accepting: [tokens.length],
  };
}

async function lawsFailing(testCase: Case): Promise<string[]> {
  const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
  const laws = await checkRun(testCase, await runCase(testCase), targetOnly);
  return laws.filter((law) => law.status === "fails").map((law) => `${law.law}: ${law.violation?.message}`);
}

describe("grammar-constrained speculation", () => {
  it("a grammar ending inside an accepted run ends the request there; every law holds", async () => {
    const plain = await runCase(grammarCase("mirror", undefined));
    const output = plain.outputs[0].tokens;
    const grammar = chainGrammar(output.slice(0, 3));
    const built = grammarCase("mirror", grammar);
    const run = await runCase(built);
    expect(run.outputs[0].tokens).toEqual(output.slice(0, 3));
    expect(run.outputs[0].finishReason).toBe("stop");
    expect(coverageLabels(built, run.trace)).toContain("grammar ends inside an accepted run");
    expect(coverageLabels(grammarCase("mirror", undefined), plain.trace)).not.toContain(
      "grammar ends inside an accepted run",
    );
    expect(await lawsFailing(built)).toEqual([]);
  });

  it("the mask moves the output off the unconstrained one, drafts rejected and all, and every law holds", async () => {
    const plain = await runCase(grammarCase("eagle", undefined, 10));
    const output = plain.outputs[0].tokens;
    // Two states alternating over tokens other than the unconstrained first choice.
    const tokens = [...new Set([...output, 20, 21, 22, 23])].filter((token) => token !== output[0] && token > 2);
    const grammar: Grammar = {
      states: 2,
      transitions: [
        ...tokens.slice(0, 3).map((token): [number, number, number] => [0, token, 1]),
        ...tokens.slice(3, 6).map((token): [number, number, number] => [1, token, 0]),
      ],
      accepting: [],
    };
    const built = grammarCase("eagle", grammar, 10);
    const run = await runCase(built);
    expect(run.outputs[0].tokens[0]).not.toBe(output[0]);
    expect(checkGrammarAcceptance(built, run.outputs, EOS).status).toBe("holds");
    expect(coverageLabels(built, run.trace)).toContain("grammar round rejects a draft");
    expect(await lawsFailing(built)).toEqual([]);
  });

  it("grammar acceptance fails on a token the grammar does not allow and on a token after the end state", () => {
    const grammar = chainGrammar([7, 8]);
    const built = grammarCase("mirror", grammar);
    const output = (tokens: number[]) => [
      { id: 0, tokens, finishReason: "stop" as const, acceptLens: [], cutRounds: 0, finishedLength: tokens.length },
    ];
    expect(checkGrammarAcceptance(built, output([7, 8]), EOS).status).toBe("holds");
    expect(checkGrammarAcceptance(built, output([7, 9]), EOS).violation?.index).toBe(1);
    expect(checkGrammarAcceptance(built, output([7, 8, 8]), EOS).violation?.index).toBe(2);
    expect(checkGrammarAcceptance(built, output([EOS]), EOS).violation?.index).toBe(0);
  });

  it("grammar state fails on a row masked in a state other than the automaton's over its context", async () => {
    const plain = await runCase(grammarCase("mirror", undefined));
    const grammar: Grammar = {
      states: 2,
      transitions: [...new Set(plain.outputs[0].tokens)].flatMap((token): [number, number, number][] => [
        [0, token, 1],
        [1, token, 0],
      ]),
      accepting: [],
    };
    const built = grammarCase("mirror", grammar);
    const run = await runCase(built);
    expect(checkGrammarState(built, run.trace).status).toBe("holds");
    const masked = run.trace.events.flatMap((event) => event.rows.filter((row) => row.grammarState !== undefined));
    expect(new Set(masked.map((row) => row.grammarState))).toEqual(new Set([0, 1]));
    const corrupted = structuredClone(run.trace);
    const verify = corrupted.events.find((event) => event.phase === "verify")!;
    verify.rows[0].grammarState = 1 - verify.rows[0].grammarState!;
    const result = checkGrammarState(built, corrupted);
    expect(result.status).toBe("fails");
    expect(result.violation?.event).toBe(verify.index);
  });

  it("a grammar needs greedy decoding and a deterministic automaton without dead ends (JSON paths)", async () => {
    const built = grammarCase("mirror", { states: 2, transitions: [[0, 7, 1]], accepting: [] });
    await expect(runCase(built)).rejects.toThrow(/sampling\/grammar\/accepting.*state 1/);
    const twice = grammarCase("mirror", {
      states: 1,
      transitions: [
        [0, 7, 0],
        [0, 7, 0],
      ],
      accepting: [],
    });
    await expect(runCase(twice)).rejects.toThrow(/grammar\/transitions\/1/);
    const sampled = grammarCase("mirror", chainGrammar([7]));
    sampled.workload.requests[0].sampling!.temperature = 0.5;
    await expect(runCase(sampled)).rejects.toThrow(/greedy/);
  });
});
