// Every law of the registry (src/laws/registry.ts) that can be judged from traces alone, run on another
// engine's trace: by validate (one trace per golden case, the golden tokens as the target-only baseline)
// and by the external-engine check (whose twins and baseline come from the same external engine).
// Laws that need the engine's internals (pool integrity checks) are "not checkable"; laws that compare
// with twin runs are "not checkable" when no twin runs exist. A profile's relaxations transform the
// trace a law sees, or make a law not checkable; each application is logged for the report.
import { ExternalEngineError } from "../adapter/client.ts";
import type { Case } from "../case/case.ts";
import type { RunResult } from "../engine/run-case.ts";
import { DRAFT_REFERENCE } from "../laws/draft-reference.ts";
import { traceTopk } from "../laws/draft-tree.ts";
import { KV_CONSERVATION } from "../laws/kv-conservation.ts";
import { notCheckable, type LawResult } from "../laws/law.ts";
import type { ReferenceOracle } from "../laws/oracle.ts";
import { PHASE_CONTRACTS } from "../laws/phase-contracts.ts";
import { POSITIONS } from "../laws/positions.ts";
import { ROW_TOKENS } from "../laws/row-tokens.ts";
import { LAWS, type TwinKind } from "../laws/registry.ts";
import type { Trace } from "../trace/schema.ts";
import { hasRelaxation, RELAXATIONS, type Relaxation, type RelaxationLog } from "./profiles.ts";
import {
  declareSharedPrefixes,
  dropPaddedExtendRows,
  isMultiLayer,
  stripDraftDecodeAttention,
  type Transformed,
} from "./relax.ts";

/** Laws whose baseline is a second trace to check the same way: without one they still judge the run's own. */
const OWN_TRACE_FIRST: ReadonlySet<string> = new Set([POSITIONS, ROW_TOKENS]);

/** Laws that read what only the engine itself knows (pool integrity checks), never a trace. */
export const ENGINE_INTERNAL_LAWS: ReadonlyMap<string, string> = new Map([
  [KV_CONSERVATION, "needs the engine's pool integrity checks, which a trace does not carry"],
]);

export interface TraceLawInputs {
  /** The case as run (config and workload). */
  testCase: Case;
  /** The engine's run, read from its trace (and outputs). */
  run: RunResult;
  /** The target-only baseline (the golden tokens, or the engine's own target-only run). */
  baseline?: RunResult;
  /** The engine's twin runs (external check); absent in validate. */
  twin?: (kind: TwinKind) => Promise<RunResult>;
  oracle: ReferenceOracle;
  log: RelaxationLog;
}

export interface TraceLawResult extends LawResult {
  /** Relaxations that changed what this law saw. */
  relaxedBy?: string[];
}

/** A RunResult made of what a trace holds: outputs from its requests and verify events, no pool checks. */
export function runFromTrace(trace: Trace): RunResult {
  const acceptLens = new Map<number, number[]>();
  for (const event of trace.events)
    for (const result of event.verify ?? [])
      acceptLens.set(result.request, [...(acceptLens.get(result.request) ?? []), result.acceptLen]);
  const outputs = (trace.requests ?? []).map((request) => ({
    id: request.id,
    tokens: request.output,
    finishReason: request.finishReason,
    acceptLens: acceptLens.get(request.id) ?? [],
    cutRounds: 0,
  }));
  return { outputs, trace, poolChecks: [], slotsInUseAtEnd: 0, steps: 0 };
}

interface View {
  trace: Trace;
  used: string[];
}

function transformed(
  view: View,
  log: RelaxationLog,
  relaxation: Relaxation,
  transform: (trace: Trace) => Transformed,
): View {
  if (!hasRelaxation(log.profile, relaxation)) return view;
  const result = transform(view.trace);
  log.record(relaxation, result.applied, result.detail);
  return result.applied === 0 ? view : { trace: result.trace, used: [...view.used, relaxation.id] };
}

function judged(result: LawResult, used: string[]): TraceLawResult {
  // A law that compared nothing says so instead of "holds".
  const out: LawResult =
    result.status === "holds" && result.checked === 0
      ? { ...notCheckable(result.law, "nothing in the trace for this law to compare"), ties: result.ties }
      : result;
  return used.length > 0 ? { ...out, relaxedBy: used } : out;
}

export async function checkTraceLaws(inputs: TraceLawInputs): Promise<TraceLawResult[]> {
  const { testCase, oracle, log } = inputs;
  const trace = inputs.run.trace;
  const profile = log.profile;
  // The transforms each relaxation makes, computed (and logged) once per trace.
  const plain: View = { trace, used: [] };
  const unpadded = transformed(plain, log, RELAXATIONS.extendPadding, dropPaddedExtendRows);
  const topk = traceTopk(trace);
  let positionsView =
    topk > 1 ? transformed(unpadded, log, RELAXATIONS.treeDraftPerLane, stripDraftDecodeAttention) : unpadded;
  positionsView = transformed(positionsView, log, RELAXATIONS.radixSharedPrefix, declareSharedPrefixes);
  const draftRelaxation =
    topk > 1 && hasRelaxation(profile, RELAXATIONS.treeDraftPerLane)
      ? RELAXATIONS.treeDraftPerLane
      : isMultiLayer(trace) && hasRelaxation(profile, RELAXATIONS.multiLayerKeptKv)
        ? RELAXATIONS.multiLayerKeptKv
        : undefined;
  const viewFor = (law: string): View =>
    law === POSITIONS
      ? positionsView
      : law === PHASE_CONTRACTS || law === DRAFT_REFERENCE || law === ROW_TOKENS
        ? unpadded
        : plain;

  const results: TraceLawResult[] = [];
  for (const law of LAWS) {
    if (!law.applies(testCase)) continue;
    const internal = ENGINE_INTERNAL_LAWS.get(law.name);
    if (internal) {
      results.push(notCheckable(law.name, internal));
      continue;
    }
    if (law.twins?.length && !inputs.twin) {
      results.push(
        notCheckable(
          law.name,
          `compares with ${law.twins.join(" and ")} runs of the case, which a single trace does not have (specconf check --engine runs them)`,
        ),
      );
      continue;
    }
    if (law.name === DRAFT_REFERENCE && draftRelaxation) {
      log.record(
        draftRelaxation,
        1,
        `draft reference not checked (${draftRelaxation === RELAXATIONS.treeDraftPerLane ? "topk > 1" : "multi-layer trace"})`,
      );
      results.push({
        ...notCheckable(law.name, `relaxed by profile ${profile.name}: ${draftRelaxation.id}`),
        relaxedBy: [draftRelaxation.id],
      });
      continue;
    }
    if (law.baseline && !inputs.baseline && !OWN_TRACE_FIRST.has(law.name)) {
      results.push(notCheckable(law.name, "no target-only baseline"));
      continue;
    }
    const view = viewFor(law.name);
    const run = view.trace === trace ? inputs.run : { ...inputs.run, trace: view.trace };
    const baseline = inputs.baseline ?? { ...runFromTrace({ formatVersion: 1, engine: { name: "none" }, events: [] }) };
    const context = {
      testCase,
      run,
      targetOnly: async () => baseline,
      oracle,
      twin: inputs.twin ?? (async () => Promise.reject(new Error("no twin runs"))),
    };
    try {
      results.push(judged(await law.check(context), view.used));
    } catch (error) {
      if (error instanceof ExternalEngineError) {
        // A twin the engine cannot run makes the law not checkable; a crash or timeout is the engine's failure.
        if (error.kind !== "unsupported") throw error;
        results.push(notCheckable(law.name, error.message));
        continue;
      }
      results.push(
        notCheckable(
          law.name,
          `the law could not read the trace: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
    }
  }
  return results;
}
