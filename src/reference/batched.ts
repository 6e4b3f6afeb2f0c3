// The cache-free references of cache-free.ts, computed for many rows at once (packed.ts): the same rows,
// the same attention, the same hidden-state chaining, in a few packed forwards instead of one forward
// per row. In exact arithmetic each row equals its one-at-a-time recomputation; in floating point rows
// of different batch shapes differ in the last bits only (ECOSYSTEM.md), which the tie-aware laws absorb.
//
// Draft rows chain: a draft-path row's hidden input is its parent row's hidden output, so the rows of
// depth d need depth d - 1 first. One forward per depth serves every request and every round: it holds
// each request's anchor rows once (row i pairs the target hidden h_i with x_{i+1}; rounds of a request
// share them, since the verified sequence is the same) and the path rows up to depth d, each attending its
// root's anchors, its ancestors and itself. Multi-layer module rows do not chain: one forward per module.
import type { ModelSpec } from "../model/spec.ts";
import type { FloatArray, ModelSession } from "../runtime/ort.ts";
import type { DraftRowReference, RowPrediction, TeacherForcedTarget } from "./cache-free.ts";
import { auxStates, toTargetPrediction } from "./eagle3-rows.ts";
import type { Eagle3Reading } from "./eagle3-reading.ts";
import { runSegments, type PackedRow } from "./packed.ts";

/** Teacher-forced target forwards over several sequences, packed (each sequence causal, alone). */
export async function teacherForcedTargets(
  session: ModelSession,
  spec: ModelSpec,
  sequences: readonly (readonly number[])[],
): Promise<TeacherForcedTarget[]> {
  const segments = sequences.map((tokens) =>
    tokens.map((token, i): PackedRow => ({ token, position: i, attendRange: [0, i] })),
  );
  const results = await runSegments(session, spec, spec.layers, segments);
  return results.map((result, s) => ({
    tokens: sequences[s],
    predictions: result.predictions,
    hidden: result.hidden,
    ...(result.layerHidden ? { layerHidden: result.layerHidden } : {}),
  }));
}

export interface DraftRowQuery {
  /** The verified sequence (prompt + output) and its teacher-forced target. */
  target: TeacherForcedTarget;
  /** Position of the round's root x_L. */
  rootPosition: number;
  /** The draft path ending at the row ([] is the draft-extend row at anchor L - 1). */
  pathTokens: readonly number[];
}

interface DraftNode {
  query: DraftRowQuery;
  depth: number;
  parent?: DraftNode;
  result?: DraftRowReference;
}

/**
 * Draft rows recomputed without a cache, batched by depth. `known` gives rows already computed (their
 * hidden feeds their children as is). Returns every row computed, ancestors included, in creation order.
 */
export async function recomputeDraftRows(
  session: ModelSession,
  spec: ModelSpec,
  draftLayers: number,
  queries: readonly DraftRowQuery[],
  known: (query: DraftRowQuery) => DraftRowReference | undefined,
  /** EAGLE-3 drafts: anchor rows are fed the checkpoint's auxiliary states; argmaxes map through its d2t. */
  eagle3?: Eagle3Reading,
): Promise<{ query: DraftRowQuery; result: DraftRowReference }[]> {
  const width = spec.hidden;
  const auxWidth = eagle3 ? eagle3.auxLayers.length * width : 0;
  // Every query and its ancestors, one node per (sequence, root, path), grouped by sequence.
  const groups = new Map<TeacherForcedTarget, Map<string, DraftNode>>();
  const created: DraftNode[] = [];
  const nodeOf = (target: TeacherForcedTarget, rootPosition: number, pathTokens: readonly number[]): DraftNode => {
    let group = groups.get(target);
    if (!group) groups.set(target, (group = new Map()));
    const key = `${rootPosition}|${pathTokens.join(",")}`;
    let node = group.get(key);
    if (!node) {
      const query = { target, rootPosition, pathTokens };
      const parent = pathTokens.length > 0 ? nodeOf(target, rootPosition, pathTokens.slice(0, -1)) : undefined;
      node = { query, depth: pathTokens.length, parent, result: known(query) };
      group.set(key, node);
      if (!node.result) created.push(node);
    }
    return node;
  };
  for (const query of queries) nodeOf(query.target, query.rootPosition, query.pathTokens);
  const maxDepth = Math.max(-1, ...created.map((node) => node.depth));
  for (let depth = 0; depth <= maxDepth; depth++) {
    const segments: PackedRow[][] = [];
    const outputs: { node: DraftNode; row: number }[][] = [];
    for (const [target, group] of groups) {
      const pending = [...group.values()].filter((node) => node.depth === depth && !node.result);
      if (pending.length === 0) continue;
      const anchors = Math.max(...pending.map((node) => node.query.rootPosition));
      // Anchor row i: target hidden h_i (EAGLE-3: the auxiliary states at position i) with token x_{i+1}, causal.
      const aux = eagle3 ? auxStates(spec, target, eagle3, anchors) : undefined;
      const rows: PackedRow[] = Array.from({ length: anchors }, (_, i) => ({
        token: target.tokens[i + 1],
        position: i,
        attendRange: [0, i],
        ...(aux
          ? { aux: aux.subarray(i * auxWidth, (i + 1) * auxWidth) }
          : { hidden: target.hidden.subarray(i * width, (i + 1) * width) }),
      }));
      const rowOf = new Map<DraftNode, number>();
      const addPathRow = (node: DraftNode): number => {
        let row = rowOf.get(node);
        if (row !== undefined) return row;
        const ancestors: number[] = [];
        for (let up = node.parent; up && up.depth > 0; up = up.parent) ancestors.unshift(addPathRow(up));
        const { rootPosition, pathTokens } = node.query;
        row = rows.length;
        rows.push({
          token: pathTokens[pathTokens.length - 1],
          position: rootPosition - 1 + node.depth,
          attendRange: [0, rootPosition],
          attendRows: ancestors,
          hidden: node.parent!.result!.hidden,
        });
        rowOf.set(node, row);
        return row;
      };
      outputs.push(
        pending.map((node) => ({ node, row: depth === 0 ? node.query.rootPosition - 1 : addPathRow(node) })),
      );
      segments.push(rows);
    }
    const results = await runSegments(session, spec, draftLayers, segments, auxWidth);
    results.forEach((result, s) => {
      for (const { node, row } of outputs[s]) {
        const prediction = result.predictions[row];
        node.result = {
          prediction: eagle3 ? toTargetPrediction(prediction, eagle3) : prediction,
          hidden: result.hidden.slice(row * width, (row + 1) * width),
        };
      }
    });
  }
  return created.map((node) => ({ query: node.query, result: node.result! }));
}

export interface ModuleRowQuery {
  target: TeacherForcedTarget;
  module: number;
  /** The row's anchor: rows 0..lastAnchor pair h_i with token x_{i+module+1} of the extended sequence. */
  lastAnchor: number;
  /** Position of the round's root; tokens beyond it are the round's drafts. */
  rootPosition: number;
  drafts: readonly number[];
}

/**
 * Multi-layer module rows recomputed without a cache, one forward per module: per request, the anchor
 * rows whose tokens are verified (shared by every query) once, then each query's rows that read a draft,
 * attending the verified anchors before them, each other, and themselves. Results in query order.
 */
export async function recomputeModuleRows(
  sessions: readonly ModelSession[],
  spec: ModelSpec,
  draftLayers: number,
  queries: readonly ModuleRowQuery[],
): Promise<RowPrediction[]> {
  const width = spec.hidden;
  const results: RowPrediction[] = new Array(queries.length);
  const modules = [...new Set(queries.map((query) => query.module))];
  for (const module of modules) {
    const groups = new Map<TeacherForcedTarget, number[]>();
    queries.forEach((query, q) => {
      if (query.module !== module) return;
      const group = groups.get(query.target) ?? [];
      groups.set(query.target, [...group, q]);
    });
    const segments: PackedRow[][] = [];
    const outputs: { query: number; row: number }[][] = [];
    const hiddenRow = (target: TeacherForcedTarget, anchor: number): FloatArray =>
      target.hidden.subarray(anchor * width, (anchor + 1) * width);
    for (const [target, members] of groups) {
      // Anchor i reads x_{i+module+1}: verified while i + module + 1 <= root.
      const verifiedRows = (query: ModuleRowQuery) =>
        Math.max(0, Math.min(query.lastAnchor + 1, query.rootPosition - module));
      const shared = Math.max(...members.map((q) => verifiedRows(queries[q])));
      const rows: PackedRow[] = Array.from({ length: shared }, (_, i) => ({
        token: target.tokens[i + module + 1],
        position: i,
        attendRange: [0, i],
        hidden: hiddenRow(target, i),
      }));
      const segmentOutputs: { query: number; row: number }[] = [];
      for (const q of members) {
        const query = queries[q];
        const first = verifiedRows(query);
        if (first === query.lastAnchor + 1) {
          segmentOutputs.push({ query: q, row: query.lastAnchor });
          continue;
        }
        const extended = [...target.tokens.slice(0, query.rootPosition + 1), ...query.drafts];
        const own: number[] = [];
        for (let anchor = first; anchor <= query.lastAnchor; anchor++) {
          own.push(rows.length);
          rows.push({
            token: extended[anchor + module + 1],
            position: anchor,
            attendRange: [0, first],
            attendRows: own.slice(0, -1),
            hidden: hiddenRow(target, anchor),
          });
        }
        segmentOutputs.push({ query: q, row: own[own.length - 1] });
      }
      segments.push(rows);
      outputs.push(segmentOutputs);
    }
    const session = sessions[module];
    if (!session) throw new Error(`no draft module ${module}`);
    const packed = await runSegments(session, spec, draftLayers, segments);
    packed.forEach((result, s) => {
      for (const { query, row } of outputs[s]) results[query] = result.predictions[row];
    });
  }
  return results;
}
