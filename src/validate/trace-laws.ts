// Every law that can run on a trace alone (plus the reference models): the laws validate runs on a
// third party's trace and the external-engine check runs on an adapter's trace. The laws are the
// plain functions of src/laws; a profile's relaxations transform the trace a law sees, or make a law
// not checkable, and each application is logged for the report.
import { ACCEPTANCE_CORRECTNESS, checkAcceptanceCorrectness } from "../laws/acceptance-correctness.ts";
import { BONUS_STRIDE, checkBonusStride } from "../laws/bonus-stride.ts";
import { checkDraftReference, DRAFT_REFERENCE } from "../laws/draft-reference.ts";
import { KV_CONSERVATION } from "../laws/kv-conservation.ts";
import { notCheckable, type LawResult } from "../laws/law.ts";
import { checkLossless, LOSSLESS } from "../laws/lossless.ts";
import { checkMirrorAcceptance, MIRROR_ACCEPTANCE } from "../laws/mirror-acceptance.ts";
import type { ReferenceOracle } from "../laws/oracle.ts";
import { checkPhaseContracts, PHASE_CONTRACTS } from "../laws/phase-contracts.ts";
import { checkPositions, POSITIONS } from "../laws/positions.ts";
import { checkReferenceDecode, REFERENCE_DECODE } from "../laws/reference-decode.ts";
import type { DraftKind } from "../model/spec.ts";
import type { Trace } from "../trace/schema.ts";
import { hasRelaxation, RELAXATIONS, type Relaxation, type RelaxationLog } from "./profiles.ts";
import { declareSharedPrefixes, dropPaddedExtendRows, isMultiLayer, stripDraftDecodeAttention, traceTopk, type Transformed } from "./relax.ts";

export interface TraceLawContext {
  oracle: ReferenceOracle;
  numSteps: number;
  numDraftTokens: number;
  /** null: no draft model (target-only). */
  draftKind: DraftKind | null;
  /** Target-only greedy outputs per request id (the golden tokens, or a target-only run): lossless compares with them. */
  baseline?: ReadonlyMap<number, readonly number[]>;
  log: RelaxationLog;
}

export interface TraceLawResult extends LawResult {
  /** Relaxations that changed what this law saw. */
  relaxedBy?: string[];
}

/** The trace each law sees, after the profile's transforms; `used` lists the relaxations applied. */
interface View {
  trace: Trace;
  used: string[];
}

function logged(view: View, context: TraceLawContext, relaxation: Relaxation, transform: (trace: Trace) => Transformed): View {
  if (!hasRelaxation(context.log.profile, relaxation)) return view;
  const result = transform(view.trace);
  context.log.record(relaxation, result.applied, result.detail);
  return result.applied === 0 ? view : { trace: result.trace, used: [...view.used, relaxation.id] };
}

function withRelaxations(result: LawResult, used: string[]): TraceLawResult {
  // A law that compared nothing says so instead of "holds".
  const judged: LawResult = result.status === "holds" && result.checked === 0 ? { ...notCheckable(result.law, "nothing in the trace for this law to compare"), ties: result.ties } : result;
  return used.length > 0 ? { ...judged, relaxedBy: used } : judged;
}

export const TRACE_LAW_NAMES = [REFERENCE_DECODE, LOSSLESS, ACCEPTANCE_CORRECTNESS, DRAFT_REFERENCE, MIRROR_ACCEPTANCE, POSITIONS, PHASE_CONTRACTS, BONUS_STRIDE, KV_CONSERVATION] as const;

export async function checkTraceLaws(trace: Trace, context: TraceLawContext): Promise<TraceLawResult[]> {
  const { oracle } = context;
  const plain: View = { trace, used: [] };
  // The extend-padding transform feeds three laws: log it once.
  const unpadded = logged(plain, context, RELAXATIONS.extendPadding, dropPaddedExtendRows);
  const results: TraceLawResult[] = [];

  results.push(withRelaxations(await checkReferenceDecode(trace.requests, oracle), []));

  if (!context.draftKind) results.push(notCheckable(LOSSLESS, "target-only run"));
  else if (!context.baseline || !trace.requests) results.push(notCheckable(LOSSLESS, context.baseline ? "the trace has no requests with outputs" : "no target-only outputs to compare with"));
  else {
    const baseline = context.baseline;
    const pairs = trace.requests.filter((request) => baseline.has(request.id)).map((request) => ({ request, targetOnly: baseline.get(request.id)! }));
    results.push(withRelaxations(await checkLossless(pairs, oracle), []));
  }

  results.push(withRelaxations(await checkAcceptanceCorrectness(trace, oracle), []));

  const topk = traceTopk(trace);
  const profile = context.log.profile;
  if (topk > 1 && hasRelaxation(profile, RELAXATIONS.treeDraftPerLane)) {
    context.log.record(RELAXATIONS.treeDraftPerLane, 1, "draft reference not checked (topk > 1)");
    results.push({ ...notCheckable(DRAFT_REFERENCE, `relaxed by profile ${profile.name}: ${RELAXATIONS.treeDraftPerLane.id}`), relaxedBy: [RELAXATIONS.treeDraftPerLane.id] });
  } else if (isMultiLayer(trace) && hasRelaxation(profile, RELAXATIONS.multiLayerKeptKv)) {
    context.log.record(RELAXATIONS.multiLayerKeptKv, 1, "draft reference not checked (multi-layer trace)");
    results.push({ ...notCheckable(DRAFT_REFERENCE, `relaxed by profile ${profile.name}: ${RELAXATIONS.multiLayerKeptKv.id}`), relaxedBy: [RELAXATIONS.multiLayerKeptKv.id] });
  } else {
    results.push(withRelaxations(await checkDraftReference(unpadded.trace, oracle), unpadded.used));
  }

  const mirror = context.draftKind === "mirror" || context.draftKind === "tapped-mirror";
  results.push(
    mirror
      ? withRelaxations(await checkMirrorAcceptance(trace, context.numSteps, context.numDraftTokens, oracle), [])
      : notCheckable(MIRROR_ACCEPTANCE, context.draftKind ? `the ${context.draftKind} draft is not a mirror` : "target-only run"),
  );

  let positions = unpadded;
  if (topk > 1) positions = logged(positions, context, RELAXATIONS.treeDraftPerLane, stripDraftDecodeAttention);
  positions = logged(positions, context, RELAXATIONS.radixSharedPrefix, declareSharedPrefixes);
  results.push(withRelaxations(checkPositions(positions.trace), positions.used));

  results.push(withRelaxations(checkPhaseContracts(unpadded.trace), unpadded.used));
  results.push(withRelaxations(checkBonusStride(trace), []));
  results.push(notCheckable(KV_CONSERVATION, "needs the engine's pool integrity checks, which a trace does not carry"));
  return results;
}
