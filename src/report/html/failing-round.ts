// The draft tree of the failing round, as the SVG draws it: the round's candidates (from the draft rows'
// scored `children`), the verified set (the candidates with a verify row) and the accepted path (acceptIndex).
// A trace without scored children (chains from engines that record none) still shows its verify rows: the
// root and the drafted chain, each node with the target's prediction.
import { readDraftRounds } from "../../laws/draft-tree.ts";
import type { Trace, TraceEvent } from "../../trace/schema.ts";

export interface TreeNode {
  /** Candidate number (0: the root), or the verify row's index when the trace numbers no candidates. */
  id: number;
  parent: number;
  token: number;
  depth: number;
  score?: number;
  verified: boolean;
  accepted: boolean;
  /** The target's prediction at this verify row. */
  predict?: number;
}

export interface RoundTree {
  request: number;
  verifyEvent: number;
  acceptLen: number;
  bonus: number;
  nodes: TreeNode[];
}

/** The verify event to draw: the violation's if it is one, else the next verify of the request after it. */
export function failingVerifyEvent(trace: Trace, near: { event?: number; request?: number }): TraceEvent | undefined {
  const verifies = trace.events.filter(
    (event) =>
      event.phase === "verify" &&
      (near.request === undefined || event.rows.some((row) => row.request === near.request)),
  );
  if (near.event !== undefined) {
    const after = verifies.find((event) => event.index >= near.event!);
    if (after) return after;
  }
  return verifies[0];
}

export function roundTree(trace: Trace, verify: TraceEvent, request?: number): RoundTree | undefined {
  const result = verify.verify?.find((entry) => request === undefined || entry.request === request);
  if (!result) return undefined;
  const rows = verify.rows.filter((row) => row.request === result.request);
  const block = verify.verify!.indexOf(result);
  // accept_index holds r * N + node (N from the trace's config, else the block's own row count).
  const configured = trace.config?.numDraftTokens;
  const width = typeof configured === "number" ? configured : rows.length;
  const acceptedRows = new Set(result.acceptIndex.filter((index) => index >= 0).map((index) => index - block * width));
  const round = readDraftRounds(trace).find(
    (candidate) => candidate.request === result.request && candidate.verify?.event === verify.index,
  );
  const verifiedCandidate = new Map<number, number>();
  rows.forEach((row, index) => row.candidate !== undefined && verifiedCandidate.set(row.candidate, index));
  if (round && !round.broken && round.candidates.size > 0) {
    const nodes: TreeNode[] = [
      {
        id: 0,
        parent: -1,
        token: rows[0]?.token ?? -1,
        depth: 0,
        verified: true,
        accepted: true,
        predict: rows[0]?.predict,
      },
    ];
    for (const candidate of [...round.candidates.values()].sort((a, b) => a.number - b.number)) {
      const rowIndex = verifiedCandidate.get(candidate.number);
      nodes.push({
        id: candidate.number,
        parent: candidate.parent,
        token: candidate.token,
        depth: candidate.depth,
        score: candidate.score,
        verified: rowIndex !== undefined,
        accepted: rowIndex !== undefined && acceptedRows.has(rowIndex),
        ...(rowIndex !== undefined && rows[rowIndex].predict !== undefined ? { predict: rows[rowIndex].predict } : {}),
      });
    }
    return {
      request: result.request,
      verifyEvent: verify.index,
      acceptLen: result.acceptLen,
      bonus: result.bonus,
      nodes,
    };
  }
  // No scored candidates: the verify rows alone (a chain unless rows carry parents).
  const depth: number[] = [];
  const nodes = rows.map((row, index): TreeNode => {
    const parent = row.parent ?? index - 1;
    depth[index] = parent < 0 ? 0 : (depth[parent] ?? index - 1) + 1;
    return {
      id: index,
      parent,
      token: row.token,
      depth: depth[index],
      verified: true,
      accepted: acceptedRows.has(index),
      ...(row.predict !== undefined ? { predict: row.predict } : {}),
    };
  });
  return {
    request: result.request,
    verifyEvent: verify.index,
    acceptLen: result.acceptLen,
    bonus: result.bonus,
    nodes,
  };
}
