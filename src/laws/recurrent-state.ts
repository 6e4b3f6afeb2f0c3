// Law "recurrent state": in a hybrid model (recurrent layers: model/mamba2.ts), every row's recurrent layers
// start from the state of exactly the tokens before it: its own request's, positions 0 .. p - 1 for a row at
// position p (a draft pool's rows by anchor). A verify pass advances the state through every draft; the state
// kept afterwards must be the accepted position's. Reading the wrong intermediate state (in bounds, silent:
// vllm#40738, sglang#26351), keeping the rejected drafts in the recurrence (vllm#39273, llama.cpp#20075) or a
// zero-accepted round indexing -1 (vllm#48475) each leave the next round's root on a state of another length;
// another request's slot shows as another request. With the prefix cache, a hit restores a state another request
// left (its checkpoint at a cached page's end): that is right only if that request's tokens it absorbed are this
// one's (a draft row at anchor p has also read token p + 1), and of the same length; a checkpoint of another
// length (vllm#53945, vllm#55601) fails as any wrong state does. Reads the trace rows' `recurrent` (what the state
// a row was fed had absorbed, as the engine's state bookkeeping carries it). Output laws (lossless, acceptance
// correctness) see the same bugs only where the wrong state moves an argmax; this law sees every one.
import type { Case } from "../case/case.ts";
import { resolveModelSpec } from "../case/models.ts";
import type { Trace } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";

export const RECURRENT_STATE = "recurrent state";

/** Whether requests `a` and `b` have the same first `count` tokens (prompt, then output) in the trace. */
function sameTokens(trace: Trace, a: number, b: number, count: number): boolean {
  const tokensOf = (id: number) => {
    const request = trace.requests?.find((candidate) => candidate.id === id);
    return request ? [...request.prompt, ...request.output] : [];
  };
  const [first, second] = [tokensOf(a), tokensOf(b)];
  if (first.length < count || second.length < count) return false;
  for (let i = 0; i < count; i++) if (first[i] !== second[i]) return false;
  return true;
}

export function checkRecurrentState(trace: Trace): LawResult {
  const tally = new LawTally(RECURRENT_STATE);
  for (const event of trace.events) {
    const drafted = event.model !== undefined && event.model !== "target";
    event.rows.forEach((row, rowIndex) => {
      const read = row.recurrent;
      if (!read) return;
      tally.checked += 1;
      if (read.length === row.position) {
        if (read.request === row.request) return;
        // A prefix hit's state: another request's, of the same tokens.
        if (sameTokens(trace, read.request, row.request, read.length + (drafted ? 1 : 0))) return;
      }
      const model = event.model ?? event.phase;
      tally.fail({
        request: row.request,
        event: event.index,
        index: rowIndex,
        message:
          `${model} row at position ${row.position} of request ${row.request} (${event.phase}) started from a ` +
          `recurrent state of ${read.length} tokens` +
          (read.request !== row.request ? ` of request ${read.request}` : "") +
          `, expected the state of its ${row.position} tokens before it`,
        expected: row.position,
        got: read.length,
      });
    });
  }
  if (tally.checked === 0) return notCheckable(RECURRENT_STATE, "no row carries the recurrent state it read");
  return tally.result();
}

export const law: Law = {
  name: RECURRENT_STATE,
  summary: "rows of hybrid models start from the recurrent state of exactly their request's tokens before them",
  appliesTo: (testCase: Case) => resolveModelSpec(testCase.model).recurrent !== undefined,
  needs: { baseline: "also-check" },
  check: ({ run, baseline }) => {
    const own = checkRecurrentState(run.trace);
    return baseline ? combine(own, checkRecurrentState(baseline.trace), "target-only run") : own;
  },
};
