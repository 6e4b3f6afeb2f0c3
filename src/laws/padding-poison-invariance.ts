// Law "padding-poison invariance": padding rows are filled with poison on every replay, and real rows never
// attend them, so the same case with other poison runs identically, event for event: the same phases, rows
// (request, token, position, slot) and, bit for bit, the same predictions, margins and top logits, and the
// same verify results. Masked columns add exactly zero and matrix rows are independent, so any difference
// is poison reaching a real row: padding entries laid over real ones (padded seq-lens sum, sglang PR 26880)
// or padding rows writing into a live slot left in the static buffer (sglang PR 22958).
import type { Case } from "../case/case.ts";
import type { Trace, TraceRow } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PADDING_POISON_INVARIANCE = "padding-poison invariance";

/** The twin: the same case with another poison seed. */
export function repoisonedTwin(testCase: Readonly<Case>): Case {
  return {
    ...testCase,
    engine: { ...testCase.engine, paddingPoisonSeed: (testCase.engine.paddingPoisonSeed ?? 0) + 1 },
  };
}

const FIELDS = ["request", "token", "position", "slot", "temporary", "predict", "margin", "topLogit"] as const;

export function checkPaddingPoisonInvariance(run: Trace, repoisoned: Trace): LawResult {
  if (!run.events.some((event) => (event.paddedRows ?? 0) > 0))
    return notCheckable(PADDING_POISON_INVARIANCE, "no forward ran padding rows");
  const tally = new LawTally(PADDING_POISON_INVARIANCE);
  const count = Math.min(run.events.length, repoisoned.events.length);
  for (let e = 0; e < count && !tally.violation; e++) {
    const a = run.events[e];
    const b = repoisoned.events[e];
    tally.checked += 1;
    if (a.phase !== b.phase || a.rows.length !== b.rows.length) {
      tally.fail({
        event: a.index,
        message: `event ${a.index}: ${a.phase} with ${a.rows.length} rows, with other poison ${b.phase} with ${b.rows.length}`,
      });
      break;
    }
    for (let r = 0; r < a.rows.length && !tally.violation; r++) {
      const field = FIELDS.find((name) => (a.rows[r] as TraceRow)[name] !== (b.rows[r] as TraceRow)[name]);
      if (field)
        tally.fail({
          event: a.index,
          index: r,
          request: a.rows[r].request,
          message: `event ${a.index} row ${r} (${a.phase}, request ${a.rows[r].request}${a.paddedRows ? `, ${a.paddedRows} padding rows` : ""}): ${field} ${String(a.rows[r][field])}, with other poison ${String(b.rows[r][field])}`,
        });
    }
    const verdicts = (trace: typeof a) =>
      JSON.stringify((trace.verify ?? []).map(({ request, acceptLen, bonus }) => [request, acceptLen, bonus]));
    if (!tally.violation && verdicts(a) !== verdicts(b))
      tally.fail({
        event: a.index,
        message: `verify event ${a.index}: results ${verdicts(a)}, with other poison ${verdicts(b)}`,
      });
  }
  if (!tally.violation && run.events.length !== repoisoned.events.length)
    tally.fail({ message: `${run.events.length} forwards, with other poison ${repoisoned.events.length}` });
  return tally.result();
}

export const law: Law = {
  name: PADDING_POISON_INVARIANCE,
  summary: "other padding poison changes nothing: every real row and verify result is identical",
  appliesTo: (testCase) => testCase.engine.graphReplay === true && (testCase.engine.graphBuckets?.length ?? 0) > 0,
  // Event for event, not per request: it cannot be composed into the canonical twin.
  needs: { twin: { kind: "repoisoned", describe: "the run with other poison", of: repoisonedTwin, composable: false } },
  unavailable: ({ run }) =>
    run.trace.events.some((event) => (event.paddedRows ?? 0) > 0) ? undefined : "no forward ran padding rows",
  check: ({ run, twin }) => checkPaddingPoisonInvariance(run.trace, twin!.trace),
};
