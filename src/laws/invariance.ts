// Comparing two runs of the same requests, tie-aware: the core of chunk, page-size and batch
// invariance. Trace-only (no model): it runs unchanged on third-party traces.
//
// Per request, each pool's projected rows (request-view.ts) are compared in order: phase, draft step,
// position, token, temporary flag, attended positions, and the row's top logit within tolerance. Then
// the outputs and each round's accept length and bonus. Floating point moves with batch shape and
// chunking, so a prediction may legitimately flip where the top-1 margin is below epsilon (a near-tie);
// everything after it can then differ. A difference is therefore excused, counted as a tie, when one of
// the two runs recorded a near-tie prediction difference at the same or an earlier segment; otherwise it
// fails, at the first offending event of the run under test. A request aborted in either run is
// compared on the common prefix only (an abort lands at a step, and steps differ between the runs).
// Tree drafting selects candidates by cumulative score, which the rows' own margins cannot show: rows
// carry the selected candidate's token path and rank gap (request-view.ts), so a row that carries
// another candidate is a near-tie only when that candidate's rank gap is below the draft epsilon in both
// runs, and a draft row's children differ legitimately only when its margin at the topk cut is. A stochastic
// request's rows record their decisions' uniforms (equal in both runs: the stream is the request's own) and
// margins; a decision within epsilon of its boundary is a near-tie like a prediction.
import { epsilonFor } from "../trace/compare.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import { isHead, MIRROR_LOGIT_SCALE, type DraftKind } from "../model/spec.ts";
import type { Trace } from "../trace/schema.ts";
import { requestViews, segmentOfOutput, type RequestView, type ViewRow } from "./request-view.ts";

export interface Tolerance {
  /** Target logit units: a target prediction with margin below it is a near-tie. */
  epsilon: number;
  /** Draft logit units (the mirror's logits carry 2^16). */
  draftEpsilon: number;
  /** Relative logit tolerance on top of the absolute epsilon. */
  relative: number;
}

/** Tolerances from what the trace records: dtype, EP and the draft kind (its logit scale). */
export function toleranceOf(trace: Trace): Tolerance {
  const dtype = trace.engine.dtype === "float64" ? "float64" : "float32";
  const epsilon = epsilonFor(dtype, trace.engine.ep ?? "cpu");
  const draft = (trace.config?.draft ?? undefined) as { kind?: DraftKind } | undefined;
  const scale = draft?.kind && !isHead(draft.kind) ? MIRROR_LOGIT_SCALE : 1;
  return { epsilon, draftEpsilon: epsilon * scale, relative: dtype === "float32" ? 1e-5 : 1e-12 };
}

/**
 * The trace shows its forwards. An engine reporting outputs only cannot show whether a prompt was chunked,
 * a retract landed or two requests shared a forward: its invariance laws compare outputs whenever the case
 * asks for the dimension, rather than read as "nothing of that kind happened".
 */
export function showsForwards(trace: Trace): boolean {
  return trace.events.length > 0;
}

export interface InvarianceOptions {
  law: string;
  /** Names the two runs in messages, e.g. "chunk 3" and "unchunked". */
  subject: string;
  baseline: string;
  tolerance?: Tolerance;
  /** Compare per-pool rows (positions, tokens, attention) as well as outputs and rounds (default true). */
  rows?: boolean;
}

interface Difference {
  segment: number;
  message: string;
  event?: number;
  index?: number;
  expected?: number;
  got?: number;
}

function isTargetPool(row: ViewRow): boolean {
  return row.phase === "prefill" || row.phase === "decode" || row.phase === "verify";
}

function describe(row: ViewRow): string {
  return `${row.phase}${row.draftStep ? ` step ${row.draftStep}` : ""} row at position ${row.position}`;
}

/** Compares two projected rows; returns a content difference, or marks a near-tie prediction flip. */
function compareRows(
  a: ViewRow,
  b: ViewRow,
  tolerance: Tolerance,
  names: [string, string],
  nearTies: number[],
): Difference | undefined {
  const where = { segment: Math.min(a.segment, b.segment), event: a.event, index: a.row };
  // A stochastic decision whose uniform lies within epsilon of its boundary may go either way (draws).
  if (Math.min(a.drawMargin ?? Infinity, b.drawMargin ?? Infinity) < tolerance.epsilon) nearTies.push(where.segment);
  const label = `${a.pool} pool, ${describe(a)} (event ${a.event} row ${a.row}; ${names[1]}: event ${b.event} row ${b.row})`;
  // A different candidate selected (its token, position or parent then differ too): tie only at a near-tie.
  if (a.path !== undefined && b.path !== undefined && a.path !== b.path) {
    const gap = Math.max(a.rankGap ?? Infinity, b.rankGap ?? Infinity);
    if (gap < tolerance.draftEpsilon) {
      nearTies.push(where.segment);
      return undefined;
    }
    return {
      ...where,
      message: `${label}: carries draft candidate [${a.path}] in ${names[0]}, [${b.path}] in ${names[1]} (rank gaps ${a.rankGap} and ${b.rankGap}, not below epsilon ${tolerance.draftEpsilon})`,
    };
  }
  const fields: [string, unknown, unknown][] = [
    ["phase", a.phase, b.phase],
    ["draft step", a.draftStep, b.draftStep],
    ["position", a.position, b.position],
    ["token", a.token, b.token],
    ["temporary flag", a.temporary, b.temporary],
  ];
  for (const [name, x, y] of fields) {
    if (x !== y)
      return {
        ...where,
        message: `${label}: ${name} ${String(x)} in ${names[0]}, ${String(y)} in ${names[1]}`,
        ...(typeof x === "number" && typeof y === "number" ? { got: x, expected: y } : {}),
      };
  }
  if (a.uniforms !== undefined && b.uniforms !== undefined && a.uniforms !== b.uniforms) {
    // The request's own stream, consumed in decision order, cannot depend on the dimension compared.
    return {
      ...where,
      message: `${label}: draws uniforms [${a.uniforms}] in ${names[0]}, [${b.uniforms}] in ${names[1]}`,
    };
  }
  if (a.attended !== undefined && b.attended !== undefined && a.attended !== b.attended) {
    return { ...where, message: `${label}: attends [${a.attended}] in ${names[0]}, [${b.attended}] in ${names[1]}` };
  }
  const epsilon = isTargetPool(a) ? tolerance.epsilon : tolerance.draftEpsilon;
  if (a.predict !== undefined && b.predict !== undefined && a.predict !== b.predict) {
    const margin = Math.min(a.margin ?? Infinity, b.margin ?? Infinity);
    if (margin < epsilon) {
      nearTies.push(where.segment);
      return undefined;
    }
    return {
      ...where,
      message: `${label}: predicts ${a.predict} in ${names[0]}, ${b.predict} in ${names[1]} (margin ${margin})`,
      got: a.predict,
      expected: b.predict,
    };
  }
  if (a.children !== undefined && b.children !== undefined && a.children !== b.children) {
    const margin = Math.min(a.childMargin ?? Infinity, b.childMargin ?? Infinity);
    if (margin < tolerance.draftEpsilon) {
      nearTies.push(where.segment);
      return undefined;
    }
    return {
      ...where,
      message: `${label}: expands into tokens [${a.children}] in ${names[0]}, [${b.children}] in ${names[1]} (margin at the topk cut ${margin})`,
    };
  }
  if (a.topLogit !== undefined && b.topLogit !== undefined) {
    const allowed = epsilon + tolerance.relative * Math.abs(b.topLogit);
    if (Math.abs(a.topLogit - b.topLogit) > allowed) {
      return {
        ...where,
        message: `${label}: top logit ${a.topLogit} in ${names[0]}, ${b.topLogit} in ${names[1]} (differ by more than ${allowed})`,
      };
    }
  }
  return undefined;
}

/**
 * A request that finishes in its final prefill chunk skips draft extend, but a chunked (or
 * budget-split) prefill already extended its non-final chunks: extra draft-extend rows in the segment
 * where the request finished are legitimate.
 */
function finishedExtendsOnly(
  a: RequestView,
  b: RequestView,
  rowsA: readonly ViewRow[],
  rowsB: readonly ViewRow[],
  common: number,
): boolean {
  const finished = (view: RequestView) =>
    view.finishReason === "eos" || view.finishReason === "stop" || view.finishReason === "length";
  if (!finished(a) || !finished(b)) return false;
  const [longer, view] = rowsA.length > rowsB.length ? [rowsA, a] : [rowsB, b];
  const finalSegment = segmentOfOutput(view, view.output.length - 1);
  return longer.slice(common).every((row) => row.phase === "draft-extend" && row.segment >= finalSegment);
}

function compareRequest(
  a: RequestView,
  b: RequestView,
  options: Required<Omit<InvarianceOptions, "tolerance">> & { tolerance: Tolerance },
): { compared: number; nearTies: number[]; differences: Difference[] } {
  const names: [string, string] = [options.subject, options.baseline];
  const prefixOnly =
    a.finishReason === "abort" ||
    b.finishReason === "abort" ||
    a.finishReason === "unfinished" ||
    b.finishReason === "unfinished";
  const nearTies: number[] = [];
  const differences: Difference[] = [];
  let compared = 0;

  if (options.rows) {
    const pools = new Set([...a.pools.keys(), ...b.pools.keys()]);
    for (const pool of pools) {
      // Positions a prefix hit reused in either run were computed in one run only: neither is compared.
      const reused = Math.max(a.prefixHits.get(pool) ?? 0, b.prefixHits.get(pool) ?? 0);
      const computed = (row: ViewRow) => !(row.segment === 0 && row.temporary !== true && row.position < reused);
      const rowsA = (a.pools.get(pool) ?? []).filter(computed);
      const rowsB = (b.pools.get(pool) ?? []).filter(computed);
      const common = Math.min(rowsA.length, rowsB.length);
      let i = 0;
      for (; i < common; i++) {
        compared += 1;
        const difference = compareRows(rowsA[i], rowsB[i], options.tolerance, names, nearTies);
        if (difference) {
          differences.push(difference);
          break;
        }
      }
      if (
        i === common &&
        rowsA.length !== rowsB.length &&
        !prefixOnly &&
        !finishedExtendsOnly(a, b, rowsA, rowsB, common)
      ) {
        const extra = rowsA[common] ?? rowsB[common];
        differences.push({
          segment: extra.segment,
          event: rowsA[common]?.event,
          message: `request ${a.id}, ${pool} pool: ${rowsA.length} rows in ${names[0]}, ${rowsB.length} in ${names[1]} (first unmatched: ${describe(extra)})`,
        });
      }
    }
  }

  const common = Math.min(a.output.length, b.output.length);
  let index = 0;
  while (index < common && a.output[index] === b.output[index]) index++;
  compared += index;
  if (index < common || (a.output.length !== b.output.length && !prefixOnly)) {
    differences.push({
      segment: segmentOfOutput(a, index),
      message:
        index < common
          ? `request ${a.id} output token ${index}: ${a.output[index]} in ${names[0]}, ${b.output[index]} in ${names[1]}`
          : `request ${a.id}: ${a.output.length} output tokens in ${names[0]}, ${b.output.length} in ${names[1]}`,
      index,
      got: a.output[index],
      expected: b.output[index],
    });
  }

  const rounds = Math.min(a.rounds.length, b.rounds.length);
  for (let k = 0; k < rounds; k++) {
    const x = a.rounds[k];
    const y = b.rounds[k];
    compared += 1;
    if (x.result.acceptLen !== y.result.acceptLen || x.result.bonus !== y.result.bonus) {
      const what =
        x.result.acceptLen !== y.result.acceptLen
          ? `accept_len ${x.result.acceptLen} vs ${y.result.acceptLen}`
          : `bonus ${x.result.bonus} vs ${y.result.bonus}`;
      differences.push({
        segment: Math.min(x.segment, y.segment),
        event: x.event,
        message: `request ${a.id} round ${k + 1} (verify event ${x.event}; ${names[1]}: event ${y.event}): ${what} (${names[0]} vs ${names[1]})`,
        got: x.result.acceptLen,
        expected: y.result.acceptLen,
      });
      break;
    }
  }
  return { compared, nearTies, differences };
}

/**
 * Compares `subject` with `baseline` request by request (requests present in both). Holds when every
 * compared item agrees; each request with a near-tie flip (and whatever differs after it) counts one tie.
 */
export function checkInvariance(subject: Trace, baseline: Trace, options: InvarianceOptions): LawResult {
  if (!subject.requests || !baseline.requests) return notCheckable(options.law, "a trace has no requests with outputs");
  const viewsA = requestViews(subject);
  const viewsB = requestViews(baseline);
  const ids = subject.requests.map((request) => request.id).filter((id) => viewsB.has(id));
  if (ids.length === 0) return notCheckable(options.law, "the two runs share no request");
  const tolerance = options.tolerance ?? toleranceOf(subject);
  const full = {
    law: options.law,
    subject: options.subject,
    baseline: options.baseline,
    rows: options.rows ?? true,
    tolerance,
  };
  const tally = new LawTally(options.law);
  for (const id of ids) {
    const { compared, nearTies, differences } = compareRequest(viewsA.get(id)!, viewsB.get(id)!, full);
    tally.checked += compared;
    // A near-tie flip is itself a difference between the runs: counted as a tie even when nothing follows it.
    if (differences.length === 0) {
      if (nearTies.length > 0) tally.ties += 1;
      continue;
    }
    const first = differences.reduce((best, difference) => (difference.segment < best.segment ? difference : best));
    if (nearTies.some((segment) => segment <= first.segment)) {
      tally.ties += 1;
      continue;
    }
    tally.fail({
      request: id,
      message: first.message,
      event: first.event,
      index: first.index,
      expected: first.expected,
      got: first.got,
    });
  }
  return tally.result();
}
