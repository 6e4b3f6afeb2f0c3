// Draft decode for chain (topk 1) and tree (topk K > 1) drafting, docs/design.md section 3. Candidates are
// numbered in creation order: step 1 takes the root's K best tokens (from the last draft extend);
// each later step runs one row per frontier node (token, the hidden of the row that produced it, anchor
// L - 1 + depth, attending to the persisted draft KV and its ancestors' temporary rows) and expands it
// into its K best children; the new frontier is the K best of those by cumulative log-softmax. The tree
// is the root plus the N - 1 best candidates (ties to the lower number). With K = 1 this is the chain.
// The trace records what selection reads: each row's candidate number and the children its logits
// expanded into with their cumulative scores (the tree selection law and the invariance laws' ties).
import type { EngineContext } from "../context.ts";
import { forwardPlan, rowPlan, windowFromFor, type RowPlan } from "../forward.ts";
import { HiddenRows } from "../hidden-rows.ts";
import { DraftDecodeInput } from "../phase-inputs.ts";
import type { Request } from "../request.ts";
import { childrenFields, topKLogSoftmax } from "../topk.ts";
import { draftRowMask, draftTopK } from "../grammar-draft.ts";
import type { DraftTree } from "./verify.ts";
import { mapPacked } from "../../trace/records.ts";

interface Candidate {
  /** 1-based creation order. */
  number: number;
  token: number;
  /** Parent candidate number; 0 is the root. */
  parent: number;
  depth: number;
  /** Cumulative log-softmax along the path. */
  score: number;
  /** This token's own log-softmax at its parent (what the frontier-by-own-logprob fault ranks by). */
  logprob: number;
  /** The hidden output of the row that produced this candidate: the input when it is expanded. */
  producedBy: HiddenRows;
  /** Temporary draft slot of this candidate's own row, once it has run. */
  slot?: number;
  /** Requests with a grammar: the mask state this candidate's row expands under (after its draft path). */
  maskState?: number;
}

export interface TreeDraftResult {
  trees: Map<number, DraftTree>;
  /** The first draft-decode step's hidden buffer ([bs * K, H]); the phase-confusion fault reuses it. */
  draftPhaseHidden: HiddenRows | undefined;
}

/** Best first: higher score, then lower number. */
function byScore(a: Candidate, b: Candidate): number {
  return b.score - a.score || a.number - b.number;
}

/** The frontier-by-own-logprob fault's order: the child's own log-probability, ignoring its path. */
function byOwnLogprob(a: Candidate, b: Candidate): number {
  return b.logprob - a.logprob || a.number - b.number;
}

export async function runTreeDraft(
  context: EngineContext,
  decoding: readonly Request[],
  epochs: ReadonlyMap<Request, number>,
): Promise<TreeDraftResult> {
  const pool = context.draftPool();
  const topk = context.config.topk;
  const width = context.spec.hidden;
  const candidates = new Map<number, Candidate[]>();
  const frontiers = new Map<number, Candidate[]>();
  for (const request of decoding) {
    const root = request.rootDraft!;
    // A round with speculation off (its schedule's 0) drafts nothing: the bonus is verified alone.
    const first = mapPacked(request.draftSteps(context.numSteps) > 0 ? root.tokens : [], (token, i): Candidate => ({
      number: i + 1,
      token,
      parent: 0,
      depth: 1,
      score: root.logprobs[i],
      logprob: root.logprobs[i],
      producedBy: request.rootHidden!,
    }));
    candidates.set(request.id, first);
    frontiers.set(request.id, [...first].sort(byScore));
  }
  // A request past its draft's context has no root (case/context-limit.ts): it drafts nothing.
  const rooted = decoding.filter((request) => request.rootHidden !== undefined);
  let draftPhaseHidden: HiddenRows | undefined =
    rooted.length > 0
      ? HiddenRows.concat(
          width,
          rooted.map((request) => request.rootHidden!),
        )
      : undefined;
  const earlyIncrement = context.faults.has("draft-position-early-increment") ? 1 : 0;
  // The draft-model-position-shifted fault: a standalone draft's decode rows fed one position late (the anchor
  // recorded and attended as it should be).
  const modelShift = context.faults.has("draft-model-position-shifted") && context.sessions.standaloneDraft ? 1 : 0;
  const frontierOrder = context.faults.has("frontier-by-own-logprob") ? byOwnLogprob : byScore;
  const session = context.draftSession();

  for (let step = 1; step < context.numSteps; step++) {
    const active = context.checkpoint(decoding, epochs);
    if (active.length === 0) break;
    // A request's schedule may give this round fewer steps (draft-schedule.ts): it leaves the loop after them.
    const stepping = active.filter((request) => request.draftSteps(context.numSteps) > step);
    const nodes = stepping.flatMap((request) => frontiers.get(request.id)!.map((node) => ({ request, node })));
    if (nodes.length === 0) break;
    const input = new DraftDecodeInput(
      stepping,
      topk,
      nodes.map(({ node }) => node.token),
      HiddenRows.concat(
        width,
        nodes.map(({ node }) => node.producedBy),
      ),
    );
    if (step === 1) draftPhaseHidden = input.hidden;
    const rows: RowPlan[] = mapPacked(nodes, ({ request, node }, r) => {
      const [slot] = pool.allocateTemporary(request.id, 1);
      node.slot = slot;
      node.maskState = draftRowMask(context, request, draftPath(candidates.get(request.id)!, node));
      const position = request.targetKvLength - 1 + node.depth + earlyIncrement;
      return rowPlan({
        request: request.id,
        token: input.tokens[r],
        position,
        windowFrom: windowFromFor(session, position),
        writeSlot: slot,
        temporary: true,
        attendPersisted: request.draftKvLength,
        attendTemporary: ancestorSlots(candidates.get(request.id)!, node),
        attendBatchRows: [r],
        // Step 1's tokens are the root's candidates: under overlap, resolved from the ring at launch.
        placeholder: node.depth === 1 ? request.launch?.draftPlaceholder : undefined,
        candidate: node.number,
        grammarState: node.maskState,
      });
    });
    const output = await context.forward(
      forwardPlan({
        phase: "draft-decode",
        model: "draft",
        pool,
        session,
        rows,
        hidden: input.hidden,
        draftStep: step,
        positionShift: modelShift,
        runner: context.draftDecodeRunner(),
        replayable: true,
      }),
    );
    for (const request of stepping) {
      const list = candidates.get(request.id)!;
      const children: Candidate[] = [];
      nodes.forEach(({ request: owner, node }, r) => {
        if (owner !== request) return;
        const expansion = draftTopK(context, request, output.result, r, topk, node.maskState, topKLogSoftmax);
        const producedBy = HiddenRows.fromForward(width, output.result.hidden, output.event, [r]);
        const firstNumber = list.length + children.length + 1;
        context.recorder.annotateRow(output.event, r, childrenFields(expansion, firstNumber, node.score));
        expansion.tokens.forEach((token, i) => {
          children.push({
            number: firstNumber + i,
            token,
            parent: node.number,
            depth: node.depth + 1,
            score: node.score + expansion.logprobs[i],
            logprob: expansion.logprobs[i],
            producedBy,
          });
        });
      });
      list.push(...children);
      frontiers.set(request.id, children.sort(frontierOrder).slice(0, topk));
    }
  }
  const trees = new Map<number, DraftTree>();
  for (const request of decoding) {
    if (!request.running || epochs.get(request) !== request.retracts) continue;
    const tree = selectTree(request.rootToken, candidates.get(request.id)!, context.numDraftTokens);
    if (request.launch) tree.placeholders = launchPlaceholders(request, tree);
    trees.set(request.id, tree);
  }
  return { trees, draftPhaseHidden };
}

/** The placeholders a tree's verify rows were resolved from: the root token, and the root's candidates at depth 1. */
export function launchPlaceholders(request: Request, tree: DraftTree): (number | undefined)[] {
  return tree.depths.map((depth) =>
    depth === 0 ? request.launch?.tokenPlaceholder : depth === 1 ? request.launch?.draftPlaceholder : undefined,
  );
}

/** The draft tokens from depth 1 down to `node` (its own token last). */
function draftPath(list: readonly Candidate[], node: Candidate): number[] {
  const tokens = [node.token];
  for (let parent = node.parent; parent > 0; parent = list[parent - 1].parent) tokens.unshift(list[parent - 1].token);
  return tokens;
}

function ancestorSlots(list: readonly Candidate[], node: Candidate): number[] {
  const slots: number[] = [];
  for (let parent = node.parent; parent > 0; parent = list[parent - 1].parent) slots.unshift(list[parent - 1].slot!);
  return slots;
}

/** Root plus the N - 1 best candidates, in ascending number (ancestor-closed: parents score higher and are numbered first). */
export function selectTree(bonus: number, list: readonly Candidate[], numDraftTokens: number): DraftTree {
  const chosen = [...list]
    .sort(byScore)
    .slice(0, numDraftTokens - 1)
    .sort((a, b) => a.number - b.number);
  const rowOf = new Map<number, number>([[0, 0]]);
  chosen.forEach((candidate, i) => rowOf.set(candidate.number, i + 1));
  // Row 0 is the root (the bonus token); pushed, not spread from map() (trace/records.ts, mapPacked).
  const tree: DraftTree = { tokens: [bonus], parents: [-1], depths: [0], placeholders: undefined, candidates: [0] };
  for (const candidate of chosen) {
    tree.tokens.push(candidate.token);
    tree.parents.push(rowOf.get(candidate.parent)!);
    tree.depths.push(candidate.depth);
    tree.candidates!.push(candidate.number);
  }
  return tree;
}
