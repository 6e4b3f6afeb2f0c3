// Law "tree selection": tree drafting keeps the right candidates (docs/design.md section 3). In every round,
// step 1 expands the root's topk children; each later step's frontier is the topk best of the previous
// step's children by cumulative log-probability; the verified set is the N - 1 best candidates (ties to
// the lower candidate number) and is ancestor-closed, its verify rows in ascending number with parents
// that match the candidates'. Judged from the trace alone (rows' candidate numbers and the scored
// children each draft row expanded into), so it runs on any engine whose trace carries scores.
// Tie-aware: a selection that differs from the exact ranking only by candidates whose scores are within
// the draft epsilon is a tie (engines rank in their own precision), counted, never a failure.
// Expansions are checked too: distinct child numbers and tokens, the first child is the row's argmax,
// scores never above the parent's (log-probabilities are <= 0); a grammar-masked row's first child is its
// best allowed token, not its raw argmax.
import type { Trace } from "../trace/schema.ts";
import { byScore, readDraftRounds, type DraftCandidate, type DraftRound } from "./draft-tree.ts";
import { toleranceOf } from "./invariance.ts";
import type { Law } from "./definition.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";

export const TREE_SELECTION = "tree selection";
const NO_SCORES = "the trace carries no scored draft candidates (rows' children)";

const list = (numbers: Iterable<number>) => [...numbers].sort((a, b) => a - b).join(", ");

/**
 * Compares a selection with the `count` best of `pool`. Returns undefined when it is exact, "tie" when
 * it differs only within epsilon, else a description of the worst swap.
 */
function judgeSelection(
  pool: readonly DraftCandidate[],
  chosen: ReadonlySet<number>,
  count: number,
  epsilon: number,
): undefined | "tie" | string {
  const expected = new Set(
    [...pool]
      .sort(byScore)
      .slice(0, count)
      .map((candidate) => candidate.number),
  );
  if (expected.size === chosen.size && [...chosen].every((number) => expected.has(number))) return undefined;
  if (chosen.size !== expected.size) return `${chosen.size} selected, expected ${expected.size}`;
  const chosenNodes = pool.filter((candidate) => chosen.has(candidate.number));
  const left = pool.filter((candidate) => !chosen.has(candidate.number));
  const worstChosen = chosenNodes.reduce((worst, candidate) => (candidate.score < worst.score ? candidate : worst));
  const bestLeft = left.reduce((best, candidate) => (candidate.score > best.score ? candidate : best));
  const gap = bestLeft.score - worstChosen.score;
  if (gap < epsilon) return "tie";
  return `selected [${list(chosen)}], expected [${list(expected)}]: candidate ${bestLeft.number} (token ${bestLeft.token}, score ${bestLeft.score}) left out, ${worstChosen.number} (token ${worstChosen.token}, score ${worstChosen.score}) kept; gap ${gap} >= epsilon ${epsilon}`;
}

function checkExpansions(round: DraftRound, tally: LawTally, epsilon: number): void {
  for (const at of round.expansions) {
    tally.checked += 1;
    const children = at.trace.children!;
    const where = { request: round.request, event: at.event, index: at.row };
    const parentScore = at === round.root ? 0 : (round.candidates.get(at.trace.candidate ?? -1)?.score ?? Number.NaN);
    const tokens = new Set(children.map((child) => child.token));
    if (tokens.size !== children.length)
      tally.fail({
        ...where,
        message: `event ${at.event} row ${at.row}: children repeat a token (${children.map((child) => child.token).join(", ")})`,
      });
    // A row a grammar masked (grammarState) ranks the allowed tokens first: its first child is the masked argmax.
    const masked = at.trace.grammarState !== undefined;
    if (!masked && at.trace.predict !== undefined && children.length > 0 && children[0].token !== at.trace.predict)
      tally.fail({
        ...where,
        message: `event ${at.event} row ${at.row}: first child is token ${children[0].token}, the row's argmax is ${at.trace.predict}`,
        expected: at.trace.predict,
        got: children[0].token,
      });
    const above = children.find((child) => child.score > parentScore + epsilon);
    if (above)
      tally.fail({
        ...where,
        message: `event ${at.event} row ${at.row}: child ${above.number} scores ${above.score}, above its parent's ${parentScore} (cumulative log-probabilities never grow)`,
      });
  }
}

function checkRound(round: DraftRound, tally: LawTally, epsilon: number): void {
  const at = (row: { event: number; row: number }) => ({ request: round.request, event: row.event, index: row.row });
  if (round.broken) {
    tally.fail({
      ...at(round.root),
      message: `request ${round.request}: draft tree cannot be linked: ${round.broken}`,
    });
    return;
  }
  checkExpansions(round, tally, epsilon);
  const all = [...round.candidates.values()];
  for (const [step, rows] of [...round.steps].sort(([a], [b]) => a - b)) {
    tally.checked += 1;
    const chosen = new Set(rows.map((row) => row.trace.candidate!));
    const pool = all.filter((candidate) => candidate.depth === step);
    const stray = rows.find((row) => !pool.some((candidate) => candidate.number === row.trace.candidate));
    if (stray) {
      tally.fail({
        ...at(stray),
        message: `request ${round.request}: draft step ${step} row carries candidate ${stray.trace.candidate}, not one of the depth-${step} candidates [${list(pool.map((candidate) => candidate.number))}]`,
      });
      continue;
    }
    // Step 1 runs every root child; later steps keep the topk best of the previous step's children.
    const verdict = judgeSelection(pool, chosen, step === 1 ? pool.length : round.topk, epsilon);
    if (verdict === "tie") tally.ties += 1;
    else if (verdict)
      tally.fail({ ...at(rows[0]), message: `request ${round.request}: frontier of draft step ${step}: ${verdict}` });
  }
  // The cut needs the verify rows' candidate numbers; a trace without any cannot show it.
  if (!round.verify || round.verify.rows.every((row) => row.trace.candidate === undefined)) return;
  tally.checked += 1;
  const rows = round.verify.rows;
  const numbers = rows.map((row) => row.trace.candidate);
  if (numbers.some((number) => number === undefined) || numbers[0] !== 0) {
    tally.fail({
      ...at(rows[0]),
      message: `request ${round.request}: verify rows do not all carry candidate numbers with the root (0) first`,
    });
    return;
  }
  const drafted = numbers.slice(1) as number[];
  const unknown = drafted.find((number) => !round.candidates.has(number));
  if (unknown !== undefined) {
    tally.fail({
      ...at(rows[numbers.indexOf(unknown)]),
      message: `request ${round.request}: verify row carries candidate ${unknown}, which no draft row produced`,
    });
    return;
  }
  const chosen = new Set(drafted);
  if (chosen.size !== drafted.length || drafted.some((number, i) => i > 0 && number < drafted[i - 1]))
    tally.fail({
      ...at(rows[0]),
      message: `request ${round.request}: verify rows' candidates [${drafted.join(", ")}] are not distinct and ascending`,
    });
  const verdict = judgeSelection(all, chosen, drafted.length, epsilon);
  if (verdict === "tie") tally.ties += 1;
  else if (verdict)
    tally.fail({
      ...at(rows[1] ?? rows[0]),
      message: `request ${round.request}: verified set (the N - 1 cut): ${verdict}`,
    });
  rows.forEach((row, i) => {
    if (i === 0) return;
    const node = round.candidates.get(row.trace.candidate!)!;
    if (node.parent !== 0 && !chosen.has(node.parent))
      tally.fail({
        ...at(row),
        message: `request ${round.request}: verified set is not ancestor-closed: candidate ${node.number} is in, its parent ${node.parent} is not`,
      });
    else if (row.trace.parent !== undefined && rows[row.trace.parent]?.trace.candidate !== node.parent)
      tally.fail({
        ...at(row),
        message: `request ${round.request}: verify row ${row.row} (candidate ${node.number}) names verify row ${row.trace.parent} as parent, which carries candidate ${rows[row.trace.parent]?.trace.candidate}; its parent is candidate ${node.parent}`,
      });
  });
}

export function checkTreeSelection(trace: Readonly<Trace>): LawResult {
  const rounds = readDraftRounds(trace);
  if (rounds.length === 0) return notCheckable(TREE_SELECTION, NO_SCORES);
  const epsilon = toleranceOf(trace as Trace).draftEpsilon;
  const tally = new LawTally(TREE_SELECTION);
  for (const round of rounds) checkRound(round, tally, epsilon);
  return tally.result();
}

export const law: Law = {
  name: TREE_SELECTION,
  summary:
    "each draft step's frontier is the topk best children by cumulative log-probability; the verified set is the N - 1 best, ancestor-closed",
  appliesTo: (testCase) => testCase.engine.mode === "speculative" && testCase.engine.multiLayer !== true,
  needs: {},
  unavailable: ({ run }) => (readDraftRounds(run.trace).length > 0 ? undefined : NO_SCORES),
  check: ({ run }) => checkTreeSelection(run.trace),
};
