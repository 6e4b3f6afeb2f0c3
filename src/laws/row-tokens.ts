// Law "rows carry request tokens": every row's input token is the one the contract assigns it, read
// against the request (x = prompt ++ output) and the drafts the trace's own draft rows produced. Target
// rows (prefill, decode, the verify root) carry x at their position; a draft-extend row at anchor i
// carries x_{i+1} (module k of multi-layer drafting: x_{i+k+1}), which at a non-final chunk's end is the
// next prompt token (sglang PR 26800 shows here as a wrong token, whatever the draft then predicts);
// draft-decode rows carry the previous draft (a tree's rows: their candidate's token) and non-root verify
// rows the drafted token of their node. Drafts are read from the trace: the latest draft-extend row's
// argmax (or first child) is d_1, each chain step's argmax the next draft, tree candidates from the rows'
// scored children (draft-tree.ts). Re-prefill after a retract carries x again; a tree without candidate
// numbers leaves its drafted rows unjudged (counted only what was checked). Trace-only.
import type { Trace, TraceEvent, TraceRow } from "../trace/schema.ts";
import { readDraftRounds, traceTopk, type DraftRound } from "./draft-tree.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, notCheckable, type LawResult } from "./law.ts";

export const ROW_TOKENS = "rows carry request tokens";
const NO_REQUESTS = "the trace has no requests with prompts and outputs";

/** Per request, the chain drafts d_1, d_2, ... of the round in flight (topk 1 and multi-layer). */
interface ChainState {
  /** The latest draft-extend row of the round's d_1 source (module 0 in multi-layer drafting). */
  lastExtend?: TraceRow;
  drafts?: number[];
}

function firstDraft(row: TraceRow | undefined): number | undefined {
  return row?.children?.[0]?.token ?? row?.predict;
}

export function checkRowTokens(trace: Readonly<Trace>): LawResult {
  if (!trace.requests) return notCheckable(ROW_TOKENS, NO_REQUESTS);
  const sequences = new Map(trace.requests.map((request) => [request.id, [...request.prompt, ...request.output]]));
  // Candidate tokens of tree rounds, keyed by the draft-decode or verify row ("event:row").
  const roundOf = new Map<string, DraftRound>();
  for (const round of readDraftRounds(trace)) {
    for (const rows of round.steps.values()) for (const at of rows) roundOf.set(`${at.event}:${at.row}`, round);
    for (const at of round.verify?.rows ?? []) roundOf.set(`${at.event}:${at.row}`, round);
  }
  // Without candidate numbers only a chain's drafted rows can be judged (topk 1, or multi-layer).
  const chainsOnly = traceTopk(trace) === 1;
  const chains = new Map<number, ChainState>();
  const chainOf = (request: number) => chains.get(request) ?? chains.set(request, {}).get(request)!;
  const tally = new LawTally(ROW_TOKENS);

  const judge = (event: TraceEvent, index: number, expected: number | undefined, what: string): void => {
    const row = event.rows[index];
    tally.checked += 1;
    if (row.token === expected) return;
    tally.fail({
      request: row.request,
      event: event.index,
      index,
      expected,
      got: row.token,
      message: `${event.phase} event ${event.index} row ${index} (request ${row.request}, position ${row.position}) carries token ${row.token}; ${expected === undefined ? `${what} is not known (the request has ${sequences.get(row.request)!.length} tokens)` : `${what} is ${expected}`}`,
    });
  };
  /** A drafted row: its tree candidate's token when the trace links it, else the chain's next draft. */
  const drafted = (event: TraceEvent, index: number, chainIndex: number | undefined, what: string): void => {
    const row = event.rows[index];
    const round = roundOf.get(`${event.index}:${index}`);
    if (round && row.candidate !== undefined) {
      const node = round.candidates.get(row.candidate);
      judge(event, index, node?.token, `its draft candidate ${row.candidate}'s token${node ? "" : " (never drafted)"}`);
      return;
    }
    const drafts = chainOf(row.request).drafts;
    const chainRow = chainsOnly || event.module !== undefined;
    if (!chainRow || chainIndex === undefined || !drafts || chainIndex >= drafts.length) return; // unlinked tree rows
    judge(event, index, drafts[chainIndex], `${what} d_${chainIndex + 1}`);
  };

  for (const event of trace.events) {
    const byRequest = new Map<number, number[]>();
    event.rows.forEach((row, index) => {
      // Discarded work (overlap: a zombie's extra round) ran on tokens the host later cut: nothing of it counts.
      if (sequences.has(row.request) && !row.discarded)
        byRequest.set(row.request, [...(byRequest.get(row.request) ?? []), index]);
    });
    for (const [request, indices] of byRequest) {
      const x = sequences.get(request)!;
      const chain = chainOf(request);
      const module = event.module ?? 0;
      if (event.phase === "prefill" || event.phase === "decode") {
        for (const index of indices) judge(event, index, x[event.rows[index].position], "the request's token there");
      } else if (event.phase === "draft-extend") {
        for (const index of indices) {
          const position = event.rows[index].position;
          judge(event, index, x[position + module + 1], `x_${position + module + 1}`);
        }
        if (module === 0) chains.set(request, { lastExtend: event.rows[indices[indices.length - 1]] });
      } else if (event.phase === "draft-decode") {
        const step = event.draftStep ?? module;
        if (step === 1 || chain.drafts === undefined)
          chain.drafts = [firstDraft(chain.lastExtend)].filter((d) => d !== undefined);
        // Chain step j runs d_j (multi-layer step k: d_1..d_k, one per row); the last row's argmax is next.
        indices.forEach((index, m) =>
          drafted(event, index, indices.length === 1 ? step - 1 : module > 0 ? m : undefined, "the draft"),
        );
        const last = event.rows[indices[indices.length - 1]].predict;
        if ((indices.length === 1 || module > 0) && last !== undefined && chain.drafts.length === step)
          chain.drafts.push(last);
      } else if (event.phase === "verify") {
        if (chain.drafts === undefined) chain.drafts = [firstDraft(chain.lastExtend)].filter((d) => d !== undefined);
        indices.forEach((index, node) => {
          const row = event.rows[index];
          const isRoot = row.parent === -1 || (row.parent === undefined && node === 0);
          if (isRoot) judge(event, index, x[row.position], "the bonus, the request's token there");
          else drafted(event, index, row.parent === node - 1 ? node - 1 : undefined, "the drafted");
        });
        chains.set(request, {});
      }
    }
  }
  if (tally.checked === 0) return notCheckable(ROW_TOKENS, "no row of a listed request");
  return tally.result();
}

export const law: Law = {
  name: ROW_TOKENS,
  summary:
    "every row carries its request's token: x at target rows, x_{i+1} at draft-extend anchor i, the drafted token at draft and verify rows",
  appliesTo: () => true,
  needs: { baseline: "also-check" },
  unavailable: ({ run }) => (run.trace.requests ? undefined : NO_REQUESTS),
  check: ({ run, baseline }) =>
    baseline
      ? combine(checkRowTokens(run.trace), checkRowTokens(baseline.trace), "target-only run")
      : checkRowTokens(run.trace),
};
