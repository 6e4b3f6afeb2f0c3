// Law "bonus stride": every accept_index entry lies in its own request's block of the verify rows ([r * N,
// (r + 1) * N) with N rows per request; with variable-length drafts each request's block is its own rows),
// and each bonus equals predict at the request's last accepted node, or for a stochastic request the token
// its accept_tokens row drew there (sglang PRs 15360/26866/26981: a stride of N instead of S + 1
// reads another request's row or past the end; invisible with topk 1, where N = S + 1). Counted only where a
// wrong stride could show (issue 25: a chain-only engine's 100 passes could not have failed); a violation fails
// wherever it shows.
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const BONUS_STRIDE = "bonus stride";

export function checkBonusStride(trace: Trace): LawResult {
  const verifyEvents = trace.events.filter((event) => event.phase === "verify" && event.verify);
  if (verifyEvents.length === 0) return notCheckable(BONUS_STRIDE, "the trace has no verify events with results");
  const tally = new LawTally(BONUS_STRIDE);
  for (const event of verifyEvents) {
    // Each request's block: its rows, contiguous in the event (equal blocks of N rows unless drafts vary).
    const blocks = new Map<number, { start: number; end: number }>();
    event.rows.forEach((row, index) => {
      const block = blocks.get(row.request);
      if (block) block.end = index + 1;
      else blocks.set(row.request, { start: index, end: index + 1 });
    });
    // A stride of N and one of S + 1 read the same rows unless some request's block is not its first and some
    // block is wider or narrower than S + 1 (trees, ragged drafts): only then could a wrong stride show.
    const width = (result: { acceptIndex: readonly number[] }) => result.acceptIndex.length;
    const strideShows =
      blocks.size >= 2 &&
      event.verify!.some((result) => {
        const block = blocks.get(result.request);
        return block !== undefined && block.end - block.start !== width(result);
      });
    for (const result of event.verify!) {
      const block = blocks.get(result.request) ?? { start: 0, end: 0 };
      if (strideShows && block.start > 0) tally.checked += 1;
      const where = { request: result.request, event: event.index };
      const entries = result.acceptIndex.slice(0, result.acceptLen);
      const outside = entries.find((index) => index < block.start || index >= block.end);
      if (outside !== undefined) {
        tally.fail({
          ...where,
          message: `verify event ${event.index}: request ${result.request}'s accept_index entry ${outside} lies outside its rows [${block.start}, ${block.end})`,
          got: outside,
        });
        continue;
      }
      const lastNode = entries[entries.length - 1];
      // A stochastic request's last node drew its token (recorded draws): the request's own accept_tokens
      // row holds it; otherwise the row's argmax.
      const drawn = event.rows[lastNode]?.draws !== undefined;
      const predict = drawn ? result.acceptTokens?.[result.acceptLen - 1] : event.rows[lastNode]?.predict;
      if (predict !== undefined && predict !== result.bonus) {
        tally.fail({
          ...where,
          message: `verify event ${event.index}: request ${result.request}'s bonus is ${result.bonus}, predict at its last accepted node (row ${lastNode}) is ${predict}`,
          expected: predict,
          got: result.bonus,
        });
      }
    }
  }
  const result = tally.result();
  return result.status === "holds" && result.checked === 0
    ? notCheckable(
        BONUS_STRIDE,
        "no verify had a second request's block wider or narrower than S + 1 (no tree, no ragged drafts in a batch): a stride of N reads the same rows as one of S + 1",
      )
    : result;
}

export const law: Law = {
  name: BONUS_STRIDE,
  summary: "accept_index entries stay in their request's block; the bonus is predict at the last accepted node",
  appliesTo: (testCase) => testCase.engine.mode === "speculative",
  needs: {},
  check: ({ run }) => checkBonusStride(run.trace),
};
