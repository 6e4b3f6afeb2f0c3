// Chain drafting (topk = 1): d_1 comes from the last draft extend; step j = 1..S-1 runs one row per
// request with token d_j and the previous draft hidden at anchor L - 1 + j, attending to the persisted
// draft KV and the round's earlier temporary rows. Draft decode KV is temporary (freed after verify).
import type { EngineContext } from "../context.ts";
import type { RowPlan } from "../forward.ts";
import { HiddenRows } from "../hidden-rows.ts";
import { DraftDecodeInput } from "../phase-inputs.ts";
import type { Request } from "../request.ts";

export interface ChainDraftResult {
  /** d_1..d_S per request id (shorter for a request aborted mid-loop: it is no longer active). */
  drafts: Map<number, number[]>;
  /** The draft-phase hidden buffer of the round's first step ([bs, H]); the phase-confusion fault reuses it. */
  draftPhaseHidden: HiddenRows | undefined;
}

export async function runChainDraft(context: EngineContext, decoding: readonly Request[]): Promise<ChainDraftResult> {
  const pool = context.draftPool();
  const drafts = new Map<number, number[]>();
  const temporarySlots = new Map<number, number[]>();
  for (const request of decoding) {
    drafts.set(request.id, [request.nextDraftToken!]);
    temporarySlots.set(request.id, []);
  }
  const width = context.spec.hidden;
  let draftPhaseHidden: HiddenRows | undefined = decoding.length > 0
    ? HiddenRows.concat(width, decoding.map((request) => request.draftHidden!), decoding[0].draftHidden!.values)
    : undefined;
  let hiddenByRequest = new Map(decoding.map((request) => [request.id, request.draftHidden!]));
  const earlyIncrement = context.faults.has("draft-position-early-increment") ? 1 : 0;

  for (let step = 1; step < context.numSteps; step++) {
    const active = context.checkpoint(decoding);
    if (active.length === 0) break;
    const tokens = active.map((request) => drafts.get(request.id)![step - 1]);
    const hidden = HiddenRows.concat(width, active.map((request) => hiddenByRequest.get(request.id)!), draftPhaseHidden!.values);
    const input = new DraftDecodeInput(active, tokens, hidden);
    if (step === 1) draftPhaseHidden = input.hidden;
    const rows: RowPlan[] = input.requests.map((request, r) => {
      const [slot] = pool.allocateTemporary(request.id, 1);
      const earlier = temporarySlots.get(request.id)!;
      const row: RowPlan = {
        request: request.id,
        token: input.tokens[r],
        position: request.targetKvLength - 1 + step + earlyIncrement,
        writeSlot: slot,
        temporary: true,
        attendPersisted: request.draftKvLength,
        attendTemporary: [...earlier],
        attendBatchRows: [r],
      };
      earlier.push(slot);
      return row;
    });
    const output = await context.forward({ phase: "draft-decode", model: "draft", pool, session: context.draftSession(), rows, hidden: input.hidden, draftStep: step });
    hiddenByRequest = new Map();
    input.requests.forEach((request, r) => {
      drafts.get(request.id)!.push(output.predict[r]);
      hiddenByRequest.set(request.id, HiddenRows.fromForward(width, output.result.hidden, output.event, [r]));
    });
  }
  return { drafts, draftPhaseHidden };
}
