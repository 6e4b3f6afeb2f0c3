// Coverage corners of grammar-constrained speculation, read from a case and its trace: where the grammar
// bugs live (vllm#48197, vllm#51660, llama.cpp's checkpointed grammar state). Only cases whose requests
// carry grammars reach them (the grammar properties' spaces: properties/dimensions.ts).
import type { Case } from "../case/case.ts";
import { grammarEndIndex } from "../sampling/grammar.ts";
import type { Trace } from "../trace/schema.ts";
import { readRounds } from "../laws/rounds.ts";

export const GRAMMAR_COVERAGE_LABELS = [
  /** A grammar reached its end state at a token before the last its round accepted (the request ends there). */
  "grammar ends inside an accepted run",
  /** A round of a request with a grammar verified drafts and rejected some (the matcher must not follow them). */
  "grammar round rejects a draft",
] as const;

export type GrammarCoverageLabel = (typeof GRAMMAR_COVERAGE_LABELS)[number];

export function grammarCoverageLabels(testCase: Readonly<Case>, trace: Trace): GrammarCoverageLabel[] {
  const grammars = new Map(
    testCase.workload.requests.flatMap((request) =>
      request.sampling?.grammar ? [[request.id, request.sampling.grammar] as const] : [],
    ),
  );
  if (grammars.size === 0) return [];
  const found = new Set<GrammarCoverageLabel>();
  const outputs = new Map((trace.requests ?? []).map((request) => [request.id, request.output]));
  for (const round of readRounds(trace)) {
    const grammar = grammars.get(round.request);
    if (!grammar) continue;
    const { acceptLen, emitted, finished } = round.result;
    const deepest = Math.max(0, ...round.verifyRows.map((row) => row.position - round.verifyRows[0].position));
    if (acceptLen - 1 < deepest) found.add("grammar round rejects a draft");
    const output = outputs.get(round.request);
    if (
      finished &&
      output &&
      (emitted?.length ?? acceptLen) < acceptLen &&
      grammarEndIndex(grammar, output) === output.length - 1
    )
      found.add("grammar ends inside an accepted run");
  }
  return [...found];
}
