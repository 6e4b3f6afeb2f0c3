// Law "grammar acceptance": every output of a request with a grammar is a word its automaton accepts so far
// (src/sampling/grammar.ts): each token allowed in the state the tokens before it lead to, EOS only where
// that state accepts, and nothing after the token that reaches an end state (the grammar finished the
// request there, wherever it fell inside an accepted run: vllm#51660, sglang#21723). Checked on the run and
// on its target-only baseline; output-only, so it also judges engines that return no trace.
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import { grammarViolation } from "../sampling/grammar.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";

export const GRAMMAR_ACCEPTANCE = "grammar acceptance";

/** Whether some request of the case carries a grammar. */
export function hasGrammar(testCase: Readonly<Case>): boolean {
  return testCase.workload.requests.some((request) => request.sampling?.grammar !== undefined);
}

export function checkGrammarAcceptance(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  eosId: number,
): LawResult {
  const tally = new LawTally(GRAMMAR_ACCEPTANCE);
  for (const output of outputs) {
    const grammar = testCase.workload.requests.find((request) => request.id === output.id)?.sampling?.grammar;
    if (!grammar) continue;
    tally.checked += 1;
    const violation = grammarViolation(grammar, output.tokens, eosId);
    if (violation)
      tally.fail({
        message: `request ${output.id}: ${violation.message} (finish reason '${output.finishReason}')`,
        request: output.id,
        index: violation.index,
        got: output.tokens[violation.index],
      });
  }
  if (tally.checked === 0) return notCheckable(GRAMMAR_ACCEPTANCE, "no request with a grammar has an output");
  return tally.result();
}

export const law: Law = {
  name: GRAMMAR_ACCEPTANCE,
  summary: "every output of a request with a grammar is accepted by it, ending at its end state",
  appliesTo: hasGrammar,
  needs: { baseline: "also-check", oracle: true },
  check: ({ testCase, run, baseline, oracle }) => {
    const own = checkGrammarAcceptance(testCase, run.outputs, oracle.spec.eosId);
    return baseline
      ? combine(own, checkGrammarAcceptance(testCase, baseline.outputs, oracle.spec.eosId), "target-only run")
      : own;
  },
};
