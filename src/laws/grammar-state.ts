// Law "grammar state": every row a grammar masked (trace field grammarState) was masked in the state its
// automaton reaches over the tokens the row's context holds, recomputed from the request's verified tokens:
// a target row at position p predicting x_{p+1} (prefill's sampling row, decode) after x_n..x_p; a verify node
// after x_n..x_L then the drafts on its path; the draft-extend row yielding a round's root candidates at anchor
// i after x_n..x_{i+1}; a draft-decode row after x_n..x_L then its draft path (read through hidden
// provenance). Only emitted tokens may advance a grammar: a matcher left where rejected drafts took it
// (llama.cpp test_spec_checkpoint_sampler.py, vllm#44297), a state lost or reset by retract and resume
// (sglang#29110), or a mask computed one token late shows at the first row after it. After a retract the
// resumed rows are judged against the same recomputation, so their states equal a run without the retract.
// Trace-only; rows of discarded work and rows past the verified tokens (an abort) are not judged.
import type { Case } from "../case/case.ts";
import { START_STATE, stateAfter, type Grammar } from "../sampling/grammar.ts";
import type { Trace, TraceEvent, TraceRow } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { hasGrammar } from "./grammar-acceptance.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";

export const GRAMMAR_STATE = "grammar state";

/** The tokens after the prompt up to and including position `last` of the verified sequence, or undefined past it. */
function verifiedOutput(sequence: readonly number[], promptLength: number, last: number): number[] | undefined {
  if (last >= sequence.length) return undefined;
  return sequence.slice(promptLength, last + 1);
}

/** A draft-decode row's root position and draft path, following hidden provenance back to the draft extend. */
function draftPath(
  byIndex: ReadonlyMap<number, TraceEvent>,
  row: TraceRow,
): { rootPosition: number; path: number[] } | undefined {
  const path = [row.token];
  for (let provenance = row.hidden; provenance;) {
    const sourceEvent = byIndex.get(provenance.event);
    const source = sourceEvent?.rows[provenance.row];
    if (!sourceEvent || !source) return undefined;
    if (sourceEvent.phase === "draft-extend") return { rootPosition: source.position + 1, path };
    path.unshift(source.token);
    provenance = source.hidden;
  }
  return undefined;
}

/** The context (output tokens) a masked row was sampled after, from the trace and the verified sequence. */
function contextOf(
  event: TraceEvent,
  index: number,
  sequence: readonly number[],
  promptLength: number,
  byIndex: ReadonlyMap<number, TraceEvent>,
): number[] | undefined {
  const row = event.rows[index];
  switch (event.phase) {
    case "prefill":
    case "decode":
      return verifiedOutput(sequence, promptLength, row.position);
    case "draft-extend":
      return verifiedOutput(sequence, promptLength, row.position + 1);
    case "draft-decode": {
      const found = draftPath(byIndex, row);
      const base = found && verifiedOutput(sequence, promptLength, found.rootPosition);
      return base && [...base, ...found.path];
    }
    case "verify": {
      // The request's block: its rows in order, parents as indices within the block (absent: a chain).
      const block = event.rows.flatMap((other, at) => (other.request === row.request ? [at] : []));
      const node = block.indexOf(index);
      const drafts: number[] = [];
      for (let current = node; current > 0;) {
        drafts.unshift(event.rows[block[current]].token);
        current = event.rows[block[current]].parent ?? current - 1;
      }
      const rootPosition = row.position - drafts.length;
      const base = verifiedOutput(sequence, promptLength, rootPosition);
      return base && [...base, ...drafts];
    }
    default:
      return undefined;
  }
}

export function checkGrammarState(testCase: Readonly<Case>, trace: Readonly<Trace>): LawResult {
  if (!trace.requests) return notCheckable(GRAMMAR_STATE, "the trace has no requests with prompts and outputs");
  const grammars = new Map<number, Grammar>();
  for (const request of testCase.workload.requests)
    if (request.sampling?.grammar) grammars.set(request.id, request.sampling.grammar);
  const sequences = new Map(
    trace.requests.map((request) => [
      request.id,
      { prompt: request.prompt.length, tokens: [...request.prompt, ...request.output] },
    ]),
  );
  const byIndex = new Map(trace.events.map((event) => [event.index, event]));
  const tally = new LawTally(GRAMMAR_STATE);
  let recorded = 0;
  for (const event of trace.events) {
    for (const [index, row] of event.rows.entries()) {
      if (row.grammarState === undefined || row.discarded) continue;
      recorded += 1;
      const grammar = grammars.get(row.request);
      const sequence = sequences.get(row.request);
      if (!grammar || !sequence) {
        tally.checked += 1;
        tally.fail({
          message: `${event.phase} event ${event.index} row ${index}: request ${row.request} has no grammar, yet the row was masked`,
          request: row.request,
          event: event.index,
          index,
        });
        continue;
      }
      const context = contextOf(event, index, sequence.tokens, sequence.prompt, byIndex);
      if (!context) continue;
      tally.checked += 1;
      const expected = stateAfter(grammar, START_STATE, context);
      if (row.grammarState !== expected)
        tally.fail({
          message: `${event.phase} event ${event.index} row ${index} (request ${row.request}, position ${row.position}) was masked in grammar state ${row.grammarState}; the automaton over its ${context.length} output token(s) ${context.join(" ")} reaches ${expected}`,
          request: row.request,
          event: event.index,
          index,
          expected,
          got: row.grammarState,
        });
    }
  }
  if (recorded === 0) return notCheckable(GRAMMAR_STATE, "no row records a grammar state");
  return tally.result();
}

export const law: Law = {
  name: GRAMMAR_STATE,
  summary: "every masked row's grammar state is the automaton's over the verified tokens and draft path before it",
  appliesTo: hasGrammar,
  needs: { baseline: "also-check" },
  unavailable: ({ run }) =>
    run.trace.events.some((event) => event.rows.some((row) => row.grammarState !== undefined))
      ? undefined
      : "no row records a grammar state",
  check: ({ testCase, run, baseline }) => {
    const own = checkGrammarState(testCase, run.trace);
    return baseline ? combine(own, checkGrammarState(testCase, baseline.trace), "target-only run") : own;
  },
};
