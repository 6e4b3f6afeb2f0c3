// Law "draft vocabulary": an EAGLE-3 draft ranks its own vocabulary and drafts target ids through the
// checkpoint's d2t. So every token a draft row yields (its predict and every child it expands into) is in
// the draft vocabulary's image (t2d), and where the row records its draft argmax (draftPredict, a draft id),
// that id is inside the draft vocabulary and predict is exactly its d2t image. Bug classes: d2t missing
// (identity), applied twice or in the wrong direction (t2d for d2t), offsets read as ids, the remap skipped
// because two vocabulary sizes compare equal, an argmax over target-vocabulary logits that were never
// masked to the draft vocabulary.
import { isEagle3 } from "../model/spec.ts";
import type { Eagle3Reading } from "../reference/eagle3-reading.ts";
import type { Trace } from "../trace/schema.ts";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";

export const DRAFT_VOCABULARY = "draft vocabulary";

export function checkDraftVocabulary(trace: Trace, reading: Eagle3Reading): LawResult {
  const draftEvents = trace.events.filter((event) => event.phase === "draft-extend" || event.phase === "draft-decode");
  if (draftEvents.length === 0) return notCheckable(DRAFT_VOCABULARY, "the trace has no draft events");
  if (!draftEvents.some((event) => event.rows.some((row) => row.predict !== undefined || row.children)))
    return notCheckable(DRAFT_VOCABULARY, "draft rows carry no predict");
  const tally = new LawTally(DRAFT_VOCABULARY);
  const inVocabulary = (token: number) =>
    token >= 0 && token < reading.inDraftVocabulary.length && reading.inDraftVocabulary[token] === 1;
  for (const event of draftEvents) {
    event.rows.forEach((row, rowIndex) => {
      const where = { request: row.request, event: event.index, index: rowIndex };
      const label = `${event.phase} event ${event.index} row ${rowIndex} (request ${row.request}, position ${row.position})`;
      if (row.draftPredict !== undefined) {
        tally.checked += 1;
        if (row.draftPredict >= reading.draftVocab) {
          tally.fail({
            ...where,
            message: `${label}: draft argmax ${row.draftPredict} is outside the draft vocabulary (${reading.draftVocab} ids)`,
          });
          return;
        }
        const expected = reading.draftToTarget[row.draftPredict];
        if (row.predict !== undefined && row.predict !== expected) {
          tally.fail({
            ...where,
            message: `${label}: draft id ${row.draftPredict} is target id ${expected} by the checkpoint's d2t; the row drafts ${row.predict}`,
            expected,
            got: row.predict,
          });
          return;
        }
      }
      const yielded = [
        ...(row.predict !== undefined ? [row.predict] : []),
        ...(row.children ?? []).map((child) => child.token),
      ];
      for (const token of yielded) {
        tally.checked += 1;
        if (!inVocabulary(token)) {
          tally.fail({
            ...where,
            message: `${label} drafts target id ${token}, which is not in the draft vocabulary (t2d): no draft id maps to it`,
            got: token,
          });
          return;
        }
      }
    });
  }
  return tally.result();
}

export const law: Law = {
  name: DRAFT_VOCABULARY,
  summary: "EAGLE-3 drafts are d2t images of draft-vocabulary argmaxes (every drafted id in t2d)",
  appliesTo: (testCase) => testCase.engine.mode === "speculative" && isEagle3(testCase.draft?.kind),
  needs: {},
  unavailable: ({ oracle }) => (oracle.eagle3 ? undefined : "the draft has no EAGLE-3 checkpoint"),
  check: ({ run, oracle }) => checkDraftVocabulary(run.trace, oracle.eagle3!),
};
