// Law "placeholder resolution": no placeholder ever reaches a model input. Every token fed to a model is a
// real token (a negative one is an unresolved placeholder: vLLM PR 46899 fed stale -1 placeholder drafts
// after a scheduling gap), and every row whose token the plan held as a placeholder (overlap scheduling)
// got the value the request's own latest producing forward wrote to that future-ring entry: the entry's
// last write is the request's, and the request wrote nothing newer elsewhere (sglang-jax issue 1487: the
// ring wrapped and a later batch's token replaced a pending one). Trace-only: rows' placeholder and the
// events' future-ring writes.
import type { FutureWrite, Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PLACEHOLDER_RESOLUTION = "placeholder resolution";

interface Write extends FutureWrite {
  event: number;
}

export function checkPlaceholderResolution(trace: Trace): LawResult {
  const rows = trace.events.reduce((sum, event) => sum + event.rows.length, 0);
  if (rows === 0) return notCheckable(PLACEHOLDER_RESOLUTION, "the trace shows no forward rows");
  const tally = new LawTally(PLACEHOLDER_RESOLUTION);
  /** The last write of each kind to each placeholder, and each request's latest write of each kind. */
  const lastTo = { token: new Map<number, Write>(), draft: new Map<number, Write>() };
  const lastAny = new Map<number, Write>();
  const latestOf = { token: new Map<number, Write>(), draft: new Map<number, Write>() };
  for (const event of trace.events) {
    event.rows.forEach((row, index) => {
      // Counted: rows planned with a placeholder (what the law is about). A negative token fails wherever it
      // shows, but rows of a run without placeholders could not have failed the rest (issue 25: no vacuous
      // passes on engines without overlap scheduling).
      if (row.placeholder !== undefined) tally.checked += 1;
      const where = { request: row.request, event: event.index, index };
      const label = `${event.phase} event ${event.index} row ${index} (request ${row.request}, position ${row.position})`;
      if (row.token < 0) {
        tally.fail({
          ...where,
          got: row.token,
          message: `${label} feeds token ${row.token} to the model: an unresolved placeholder${row.placeholder !== undefined ? ` (planned as ${row.placeholder})` : ""}`,
        });
        return;
      }
      if (row.placeholder === undefined) return;
      // The root token (verify root, target decode) or a draft root candidate (draft rows, verify depth 1).
      const kind = event.phase === "decode" || (event.phase === "verify" && row.parent === -1) ? "token" : "draft";
      const write = lastTo[kind].get(row.placeholder);
      const other = lastAny.get(row.placeholder);
      const problem = !write
        ? `nothing was written to placeholder ${row.placeholder}`
        : other && other.request !== row.request
          ? `placeholder ${row.placeholder} was last written by request ${other.request} (event ${other.event})`
          : write.request !== row.request
            ? `placeholder ${row.placeholder}'s ${kind} was written by request ${write.request} (event ${write.event})`
            : latestOf[kind].get(row.request) !== write
              ? `placeholder ${row.placeholder} holds request ${row.request}'s ${kind} from event ${write.event}, not its latest (event ${latestOf[kind].get(row.request)!.event})`
              : kind === "token"
                ? write.token !== row.token
                  ? `the token is ${row.token}, placeholder ${row.placeholder} holds ${write.token}`
                  : undefined
                : !(write.draft ?? []).includes(row.token)
                  ? `the token is ${row.token}, placeholder ${row.placeholder}'s draft root is [${(write.draft ?? []).join(", ")}]`
                  : undefined;
      if (problem) tally.fail({ ...where, message: `${label} resolved a placeholder wrongly: ${problem}` });
    });
    for (const future of event.futures ?? []) {
      const write = { ...future, event: event.index };
      lastAny.set(future.placeholder, write);
      if (future.token !== undefined) {
        lastTo.token.set(future.placeholder, write);
        latestOf.token.set(future.request, write);
      }
      if (future.draft !== undefined) {
        lastTo.draft.set(future.placeholder, write);
        latestOf.draft.set(future.request, write);
      }
    }
  }
  const result = tally.result();
  return result.status === "holds" && result.checked === 0
    ? notCheckable(PLACEHOLDER_RESOLUTION, "no row was planned with a placeholder (no overlap scheduling in this run)")
    : result;
}

export const law: Law = {
  name: PLACEHOLDER_RESOLUTION,
  summary: "no placeholder reaches a model input; placeholders resolve to their request's latest output",
  appliesTo: () => true,
  needs: {},
  check: ({ run }) => checkPlaceholderResolution(run.trace),
};
