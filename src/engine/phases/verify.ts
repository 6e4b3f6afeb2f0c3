// Verify: the target runs N rows per request (root = the bonus x_L, then the draft nodes) at positions
// L + depth with the tree mask; greedy acceptance walks from the root while a child carries its
// parent's predict, stochastic requests accept by rejection sampling (stochastic-sampler.ts). The path's target KV is compacted to positions L..L + accept_len - 1 and every
// other verify slot is freed.
import type { VerifyResult } from "../../trace/schema.ts";
import type { EngineContext } from "../context.ts";
import { forwardPlan, rowPlan, targetWindowFrom, type RowPlan } from "../forward.ts";
import { captureDraftInput } from "../aux-capture.ts";
import type { DraftInputRows } from "../hidden-rows.ts";
import type { Request } from "../request.ts";
import type { SampledRow } from "../row-sampler.ts";
import { rejectionWalk, rowDistribution } from "../stochastic-sampler.ts";
import { mapPacked, verifyResult } from "../../trace/records.ts";

/** A draft tree in verify-row order: node 0 is the root (the bonus token). A chain is a path. */
export interface DraftTree {
  tokens: number[];
  /** parents[0] = -1; parents are numbered before their children. */
  parents: number[];
  depths: number[];
  /** Overlap: the future-ring placeholder a node's token was resolved from at launch (trace rows record it). */
  placeholders?: (number | undefined)[];
  /** Tree drafting: each node's draft candidate number (0 for the root); absent for multi-layer chains. */
  candidates?: number[];
}

/**
 * A chain of `drafts` after the root (every node's parent the one before it), with every field present: one
 * shape for chains, trees and n-gram proposals (verify's loops read all three).
 */
export function chainTree(root: number, drafts: readonly number[]): DraftTree {
  const tree: DraftTree = {
    tokens: [root],
    parents: [-1],
    depths: [0],
    placeholders: undefined,
    candidates: undefined,
  };
  drafts.forEach((token, i) => {
    tree.tokens.push(token);
    tree.parents.push(i);
    tree.depths.push(i + 1);
  });
  return tree;
}

export interface AcceptedRound {
  request: Request;
  /** Node indices of the accepted path, root first. */
  path: number[];
  /** The path's verify hidden states, root first ([accept_len, H]; EAGLE-3: the auxiliary states). */
  pathHidden: DraftInputRows;
  /** The path's sampled rows, root first (requests with sampling options; else undefined entries). */
  pathSampled: (SampledRow | undefined)[];
  result: VerifyResult;
}

/** Greedy acceptance: from the root, follow the lowest-numbered child whose token equals predict[node]. */
export function acceptPath(tree: DraftTree, predict: readonly number[]): number[] {
  const path = [0];
  for (;;) {
    const node = path[path.length - 1];
    const child = tree.parents.findIndex((parent, index) => parent === node && tree.tokens[index] === predict[node]);
    if (child < 0) return path;
    path.push(child);
  }
}

/**
 * Sliding windows: the window of the request's next target row moves over the verified block (as a ring
 * cache's head does when the block's keys are written), then rolls back over the rejected depth, landing
 * acceptLen positions on. The fault rolls a rejected round back to where it started (the block's whole depth):
 * the next rows' windows then reach keys the window has left (transformers PR 47447, OpenVINO PR 37620).
 */
function commitWindow(context: EngineContext, request: Request, tree: DraftTree, acceptLen: number): void {
  const blockDepth = Math.max(...tree.depths) + 1;
  request.targetWindowStart += blockDepth;
  const rejected = blockDepth - acceptLen;
  if (rejected > 0)
    request.targetWindowStart -= context.faults.has("window-rollback-to-round-start") ? blockDepth : rejected;
}

/**
 * The verify node whose recurrent state is committed: the accepted path's last. The three faults are the ways
 * engines were seen to pick another (docs/laws.md, the recurrent state law); each reads a state in bounds.
 */
function committedNode(context: EngineContext, path: readonly number[], blockSize: number): number {
  const accepted = path[path.length - 1];
  if (context.faults.has("recurrent-state-wrong-slot")) return Math.min(path.length, blockSize - 1);
  if (context.faults.has("recurrent-rejected-drafts-kept")) return blockSize - 1;
  if (context.faults.has("recurrent-zero-accepted-wraps") && path.length === 1 && blockSize > 1) return blockSize - 1;
  return accepted;
}

/** The root-first path to a node (parents are numbered before their children). */
function ancestorsOf(tree: DraftTree, node: number): number[] {
  const chain: number[] = [];
  for (let current = node; current >= 0; current = tree.parents[current]) chain.push(current);
  return chain.reverse();
}

export async function runVerify(
  context: EngineContext,
  requests: readonly Request[],
  trees: ReadonlyMap<number, DraftTree>,
): Promise<AcceptedRound[]> {
  const pool = context.pools.target;
  const numNodes = context.numDraftTokens;
  const numSteps = context.numSteps;
  const rows: RowPlan[] = [];
  const verifySlots = new Map<number, number[]>();
  // Blocks are ragged: a request's block holds its own tree (N rows, or 1 + its drafts with prompt lookup).
  const blockStarts: number[] = [];
  requests.forEach((request) => {
    const tree = trees.get(request.id)!;
    const slots = pool.allocateTemporary(request.id, tree.tokens.length);
    verifySlots.set(request.id, slots);
    const base = rows.length;
    blockStarts.push(base);
    const samples = request.samplesProcessed;
    tree.tokens.forEach((token, node) => {
      const depth = tree.depths[node];
      const ancestors = ancestorsOf(tree, node);
      // vLLM issue 42744: processing applied at the bonus position only (depth S), the drafts judged raw.
      const processAll = !(context.faults.has("processing-bonus-only") && depth < numSteps);
      // Node d's prediction follows the drafts d_1..d_d on its path: they count as committed output.
      const sampler = samples
        ? request.rowSampler(
            ancestors.slice(1).map((ancestor) => tree.tokens[ancestor]),
            context.spec.eosId,
            processAll,
          )
        : undefined;
      rows.push(
        rowPlan({
          request: request.id,
          token,
          position: request.targetKvLength + depth,
          windowFrom: targetWindowFrom(context, request, depth),
          writeSlot: slots[node],
          temporary: true,
          attendPersisted: request.targetKvLength,
          attendTemporary: [],
          attendBatchRows: ancestors.map((ancestor) => base + ancestor),
          treeParent: tree.parents[node],
          placeholder: tree.placeholders?.[node],
          sampler,
          candidate: tree.candidates?.[node],
        }),
      );
    });
  });
  const output = await context.forward(
    forwardPlan({
      phase: "verify",
      model: "target",
      pool,
      session: context.sessions.target,
      rows,
      replayable: true,
    }),
  );

  // accept_index and accept_tokens for the whole batch first (a real engine builds these buffers on the
  // device), then every request's bonus is read from accept_tokens.
  // The token chosen after each row: greedy requests the row's (processed) argmax; stochastic requests the
  // rejection walk's on its path (the next accepted draft, then the recovered or bonus token drawn).
  const chosen = [...output.predict];
  const paths = mapPacked(requests, (request, r) => {
    const tree = trees.get(request.id)!;
    if (!request.stochastic)
      return acceptPath(tree, output.predict.slice(blockStarts[r], blockStarts[r] + tree.tokens.length));
    const rowOf = (node: number) => blockStarts[r] + node;
    const walk = rejectionWalk(
      tree,
      (node) => rowDistribution(request, output.sampled[rowOf(node)], true, context.faults),
      request,
      context.faults,
    );
    walk.path.forEach((node, i) => {
      chosen[rowOf(node)] = i + 1 < walk.path.length ? tree.tokens[walk.path[i + 1]] : walk.finalToken;
    });
    for (const [node, draws] of walk.draws) context.recorder.annotateRow(output.event, rowOf(node), { draws });
    return walk.path;
  });
  // Each request's path as batch rows, padded with -1 to S + 1 entries.
  const acceptIndex: number[] = [];
  paths.forEach((path, r) => {
    for (const node of path) acceptIndex.push(blockStarts[r] + node);
    for (let j = path.length; j <= numSteps; j++) acceptIndex.push(-1);
  });
  const acceptTokens = acceptIndex.map((index) => (index < 0 ? -1 : chosen[index]));
  // accept_tokens rows are S + 1 wide, not N (sglang PRs 15360/26866): the bonus-stride fault uses N.
  const bonusStride = context.faults.has("bonus-stride") ? numNodes : numSteps + 1;
  const staleRow = context.faults.has("zero-draft-stale-row");
  const rounds: AcceptedRound[] = mapPacked(requests, (request, r) => {
    const path = paths[r];
    const acceptLen = path.length;
    const drafts = trees.get(request.id)!.tokens.length - 1;
    // A request without drafts skips the accept kernel; the zero-draft fault then reads its persistent
    // buffer's row, which an earlier round left there (vLLM issue 39273).
    const read =
      drafts === 0 && staleRow
        ? context.acceptBuffer[r * (numSteps + 1)]
        : acceptTokens[r * bonusStride + acceptLen - 1];
    // A wrong stride reads another request's row, padding or past the end; a real engine gets whatever
    // is there. Padding and out-of-range reads become token 0 so the fault corrupts instead of crashing.
    const bonus = read === undefined || read < 0 ? 0 : read;
    const row = acceptIndex.slice(r * (numSteps + 1), (r + 1) * (numSteps + 1));
    const pathHidden = captureDraftInput(
      context,
      output,
      path.map((node) => blockStarts[r] + node),
    );
    return {
      request,
      path,
      pathHidden,
      pathSampled: path.map((node) => output.sampled[blockStarts[r] + node]),
      result: verifyResult({
        request: request.id,
        acceptIndex: row,
        acceptLen,
        acceptTokens: row.map((index) => (index < 0 ? -1 : chosen[index])),
        bonus,
      }),
    };
  });
  // The accept kernel's persistent output buffer (rows of requests that verified drafts).
  requests.forEach((request, r) => {
    if (trees.get(request.id)!.tokens.length === 1) return;
    for (let j = 0; j <= numSteps; j++)
      context.acceptBuffer[r * (numSteps + 1) + j] = acceptTokens[r * (numSteps + 1) + j];
  });

  // Hybrid models: the verify forward left one recurrent state per node; the accepted position's is committed,
  // and the accepted nodes at page boundaries leave checkpoints (the prefix cache's, recurrent-states.ts).
  const recOut = output.result.recOut;
  if (pool.recurrent && recOut)
    rounds.forEach((round, r) => {
      const states = pool.recurrent!;
      const absorbedAt = (row: number) => ({ request: rows[row].request, length: rows[row].position + 1 });
      for (const node of round.path)
        states.checkpoint(round.request.id, recOut, blockStarts[r] + node, absorbedAt(blockStarts[r] + node));
      const blockSize = trees.get(round.request.id)!.tokens.length;
      const row = blockStarts[r] + committedNode(context, round.path, blockSize);
      states.commit(round.request.id, recOut, row, absorbedAt(row));
    });

  // Compaction: copy the path's K/V into the request's persisted positions, then free the verify slots.
  for (const round of rounds) {
    const { request, path } = round;
    commitWindow(context, request, trees.get(request.id)!, path.length);
    const slots = verifySlots.get(request.id)!;
    const L = request.targetKvLength;
    const persisted = pool.extendPersisted(request.id, L + path.length);
    path.forEach((node, i) => pool.copySlot(slots[node], persisted[i]));
    // With shared slots the trace follows every write: the committed copies are writes without rows.
    if (context.prefixCache)
      context.recorder.reference({ pool: pool.name, holder: request.id, change: "write", slots: persisted });
    // The path's slots, then the rejected nodes' (the leaked-rejected-slots fault frees only the path's).
    const toFree = mapPacked(path, (node) => slots[node]);
    if (!context.faults.has("leaked-rejected-slots"))
      slots.forEach((slot, node) => {
        if (!path.includes(node)) toFree.push(slot);
      });
    pool.freeTemporary(request.id, toFree);
  }
  context.recorder.attachVerify(
    output.event,
    mapPacked(rounds, (round) => round.result),
  );
  return rounds;
}
