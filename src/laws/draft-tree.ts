// Reads tree-drafting rounds out of a trace (any topk; a chain is a tree of width 1), from what the rows
// record: the draft-extend row whose `children` are a round's depth-1 candidates, the draft-decode rows
// (each carrying its `candidate` and the `children` its logits expanded into), and the verify rows
// (root, then the chosen candidates). Trace-only: the tree selection and row tokens laws judge these
// rounds, and the invariance laws read each selected row's path and rank gap to tell a near-tie flip of
// the selection from a real difference. Multi-layer traces record no children and yield no rounds.
import type { Trace, TraceRow } from "../trace/schema.ts";

export interface DraftCandidate {
  number: number;
  /** Parent candidate number; 0 is the root. */
  parent: number;
  token: number;
  depth: number;
  /** Cumulative log-softmax from the root, in the draft's logit units. */
  score: number;
  /** Where it was created: the row whose children list holds it. */
  event: number;
  row: number;
}

export interface RoundRow {
  event: number;
  /** Row index within the event. */
  row: number;
  trace: TraceRow;
}

export interface DraftRound {
  request: number;
  /** The draft-extend row whose children are the depth-1 candidates. */
  root: RoundRow;
  /** Children per expanded row (topk), read from the root expansion. */
  topk: number;
  candidates: Map<number, DraftCandidate>;
  /** Rows whose children were read (the root first), for expansion checks. */
  expansions: RoundRow[];
  /** Draft-decode rows per draft step (1-based), in row order. */
  steps: Map<number, RoundRow[]>;
  /** The round's verify rows (root first), when it was verified. */
  verify?: { event: number; rows: RoundRow[] };
  /** Some child number was recorded twice, or a draft-decode row carries no candidate: the tree cannot be linked. */
  broken?: string;
}

function addChildren(round: DraftRound, at: RoundRow, parent: number, depth: number): void {
  for (const child of at.trace.children ?? []) {
    if (round.candidates.has(child.number)) {
      round.broken ??= `candidate ${child.number} is created twice (event ${at.event} row ${at.row})`;
      continue;
    }
    // Field by field, not a spread: this runs for every child of every draft row, several times per check.
    round.candidates.set(child.number, {
      number: child.number,
      parent,
      token: child.token,
      depth,
      score: child.score,
      event: at.event,
      row: at.row,
    });
  }
  round.expansions.push(at);
}

/** Every round of every request that recorded a root expansion, in trace order. */
export function readDraftRounds(trace: Readonly<Trace>): DraftRound[] {
  const rounds: DraftRound[] = [];
  const open = new Map<number, DraftRound>();
  const endsBefore = new Map<number, number[]>();
  for (const entry of trace.lifecycle ?? [])
    endsBefore.set(entry.beforeEvent, [...(endsBefore.get(entry.beforeEvent) ?? []), entry.request]);
  for (const event of trace.events) {
    // An abort or retract ends the round in flight: a resumed request drafts a new one.
    for (const request of endsBefore.get(event.index) ?? []) open.delete(request);
    if (event.module !== undefined && event.module > 0) continue;
    if (event.phase === "draft-extend") {
      event.rows.forEach((row, index) => {
        if (!row.children) return;
        const at = { event: event.index, row: index, trace: row };
        const round: DraftRound = {
          request: row.request,
          root: at,
          topk: row.children.length,
          candidates: new Map(),
          expansions: [],
          steps: new Map(),
        };
        addChildren(round, at, 0, 1);
        rounds.push(round);
        open.set(row.request, round);
      });
    } else if (event.phase === "draft-decode") {
      event.rows.forEach((row, index) => {
        const round = open.get(row.request);
        if (!round) return;
        const at = { event: event.index, row: index, trace: row };
        const step = event.draftStep ?? 0;
        round.steps.set(step, [...(round.steps.get(step) ?? []), at]);
        if (row.candidate === undefined) {
          round.broken ??= `draft-decode event ${event.index} row ${index} carries no candidate number`;
          return;
        }
        const node = round.candidates.get(row.candidate);
        if (row.children) addChildren(round, at, row.candidate, (node?.depth ?? step) + 1);
      });
    } else if (event.phase === "verify") {
      for (const request of new Set(event.rows.map((row) => row.request))) {
        const round = open.get(request);
        if (!round) continue;
        const rows: RoundRow[] = [];
        event.rows.forEach(
          (row, index) => row.request === request && rows.push({ event: event.index, row: index, trace: row }),
        );
        round.verify = { event: event.index, rows };
        open.delete(request);
      }
    }
  }
  return rounds;
}

/** Best first: higher cumulative score, then the lower candidate number (the contract's tie rule). */
export function byScore(a: DraftCandidate, b: DraftCandidate): number {
  return b.score - a.score || a.number - b.number;
}

/** The tokens from the root's child down to the candidate, as one string (identity across runs). */
export function pathOf(round: DraftRound, number: number): string | undefined {
  const tokens: number[] = [];
  for (let current = number; current !== 0;) {
    const node = round.candidates.get(current);
    if (!node || tokens.length > round.candidates.size) return undefined;
    tokens.unshift(node.token);
    current = node.parent;
  }
  return tokens.join(",");
}

export interface SelectedRow {
  /** The candidate's token path from the root ("" for the verify root). */
  path: string;
  /**
   * The smallest score gap between this candidate and its neighbours in the ranking the selection read
   * (and, for a root child ranked last, the root's margin at the topk cut): below the draft epsilon the
   * candidate's place, so whether and where it was selected, is a near-tie.
   */
  rankGap: number;
}

function rankGaps(pool: readonly DraftCandidate[], below?: number): Map<number, number> {
  const ranked = [...pool].sort(byScore);
  const gaps = new Map<number, number>();
  ranked.forEach((candidate, i) => {
    const above = i > 0 ? ranked[i - 1].score - candidate.score : Infinity;
    const under = i + 1 < ranked.length ? candidate.score - ranked[i + 1].score : (below ?? Infinity);
    gaps.set(candidate.number, Math.min(above, under));
  });
  return gaps;
}

/**
 * For each draft-decode and verify row of a linked round, keyed "event:row": the path of the candidate it
 * carries and its rank gap in the selection that put it there (step 1: the root's children; step j: the
 * depth-j candidates; verify: all candidates, the N - 1 cut).
 */
export function selectedRows(rounds: readonly DraftRound[]): Map<string, SelectedRow> {
  const out = new Map<string, SelectedRow>();
  for (const round of rounds) {
    if (round.broken) continue;
    const all = [...round.candidates.values()];
    for (const [step, rows] of round.steps) {
      const pool = all.filter((candidate) => candidate.depth === step);
      const gaps = rankGaps(pool, step === 1 ? round.root.trace.childMargin : undefined);
      for (const at of rows) {
        const number = at.trace.candidate!;
        const path = pathOf(round, number);
        if (path !== undefined) out.set(`${at.event}:${at.row}`, { path, rankGap: gaps.get(number) ?? Infinity });
      }
    }
    if (!round.verify) continue;
    const gaps = rankGaps(all);
    for (const at of round.verify.rows) {
      const number = at.trace.candidate;
      if (number === undefined) continue;
      const path = pathOf(round, number);
      if (path !== undefined)
        out.set(`${at.event}:${at.row}`, { path, rankGap: number === 0 ? Infinity : (gaps.get(number) ?? Infinity) });
    }
  }
  return out;
}

/**
 * topk of the traced run: the config's when recorded, else the most rows one request has in one chain or
 * tree draft-decode event (multi-layer module steps run k rows at step k whatever topk is).
 */
export function traceTopk(trace: Readonly<Trace>): number {
  const configured = trace.config?.topk;
  if (typeof configured === "number") return configured;
  let topk = 1;
  for (const event of trace.events) {
    if (event.phase !== "draft-decode" || event.module !== undefined) continue;
    const perRequest = new Map<number, number>();
    for (const row of event.rows) perRequest.set(row.request, (perRequest.get(row.request) ?? 0) + 1);
    for (const count of perRequest.values()) topk = Math.max(topk, count);
  }
  return topk;
}
