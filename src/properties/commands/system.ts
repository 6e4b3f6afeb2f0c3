// The system under test of the model-based suite: one Engine built as runCase builds it (sessions from
// the case's models), with between-forward hooks the Step command arms, plus the checks run after every
// command: pool integrity in every pool, then, through the one runner, every single-run law that reads no
// cache-free reference (the engine's own per-step pool checks among them) over the trace so far; outputs
// are compared with the commands' model instead. The engine comes from createEngine (src/engine/run-case.ts),
// the factory runCase uses, so the suite steps exactly the engine runCase runs (docs/laws.md, "engine hooks").
import type { Case } from "../../case/case.ts";
import { checkCaseConsistency } from "../../case/consistency.ts";
import { resolveModelSpec } from "../../case/models.ts";
import { createEngine, runCase } from "../../engine/run-case.ts";
import type { Engine } from "../../engine/step-loop.ts";
import type { KvPool } from "../../engine/kv-pool.ts";
import { LAWS } from "../../laws/registry.ts";
import { ReferenceOracle } from "../../reference/oracle.ts";
import { checkLaws } from "../../check/runner.ts";
import { Unavailable, type RunSource } from "../../check/source.ts";
import { TRACE_FORMAT_VERSION, type Trace } from "../../trace/schema.ts";

export interface Hook {
  kind: "abort" | "retract";
  request: number;
  /** Before this forward of the next step. */
  beforeForward: number;
}

export class EngineSystem {
  /** Armed by the Step command for the next step only. */
  hooks: Hook[] = [];
  /** The equivalent case: arrivals, aborts and retracts as they were issued (for the failure file). */
  readonly replayCase: Case;

  private constructor(
    readonly testCase: Case,
    readonly engine: Engine,
    readonly oracle: ReferenceOracle,
  ) {
    this.replayCase = { ...testCase, workload: { requests: [], aborts: [], retracts: [] } };
  }

  static async create(testCase: Case): Promise<EngineSystem> {
    const spec = resolveModelSpec(testCase.model);
    checkCaseConsistency(
      {
        ...testCase,
        workload: {
          ...testCase.workload,
          requests: [{ id: 0, prompt: [...spec.preamble], maxNewTokens: 1, arrivalStep: 0 }],
        },
      },
      spec,
    );
    const runtime = testCase.engine.runtime;
    let system: EngineSystem | undefined;
    const { engine, models } = await createEngine(testCase, {
      trace: true,
      betweenForwards: (self, step, forwardInStep) => {
        for (const hook of system?.hooks ?? []) {
          if (hook.beforeForward !== forwardInStep) continue;
          if (hook.kind === "abort") self.abort(hook.request);
          else self.retract(hook.request);
          const list =
            hook.kind === "abort" ? system!.replayCase.workload.aborts : system!.replayCase.workload.retracts!;
          list.push({ request: hook.request, step, beforeForward: forwardInStep });
        }
      },
    });
    const oracle = await ReferenceOracle.create(models, runtime);
    system = new EngineSystem(testCase, engine, oracle);
    return system;
  }

  pools(): KvPool[] {
    const pools = this.engine.context.pools;
    return [pools.target, ...(pools.draft ? [pools.draft] : []), ...(pools.draftModules ?? [])];
  }

  /** The trace so far, as runCase would write it. */
  trace(): Trace {
    const recorder = this.engine.context.recorder;
    return {
      formatVersion: TRACE_FORMAT_VERSION,
      engine: { name: "specconf-reference", dtype: this.oracle.spec.dtype, ep: this.testCase.engine.runtime.ep },
      config: { ...this.testCase.engine, draft: this.testCase.draft },
      requests: [...this.engine.requests.values()].map((request) => ({
        id: request.id,
        prompt: [...request.prompt],
        // Mid-run under overlap the device is a step ahead of the processed output: rows already carry it.
        output: request.status === "finished" ? [...request.output] : request.tokens.slice(request.prompt.length),
        finishReason: request.finishReason ?? "unfinished",
      })),
      events: recorder.events,
      ...(recorder.lifecycle.length > 0 ? { lifecycle: recorder.lifecycle } : {}),
    };
  }

  /** The engine so far as a run source: its trace and internals now; no baseline or twin mid-run. */
  private source(): RunSource {
    const idle = !this.engine.hasWork();
    const run = {
      outputs: [],
      trace: this.trace(),
      internals: {
        poolChecks: this.engine.poolChecks,
        // Only once no request is active must every pool be empty but for the pages the prefix cache keeps.
        slotsInUseAtEnd: idle ? this.pools().reduce((sum, pool) => sum + slotsHeldByRequests(pool), 0) : 0,
        steps: this.engine.step,
      },
    };
    const unavailable = async (): Promise<never> => {
      throw new Unavailable("a run in progress");
    };
    return {
      name: "engine so far",
      run: async () => run,
      targetOnly: unavailable,
      twin: unavailable,
      oracle: async () => this.oracle,
    };
  }

  /** Problems after a command: every pool's own integrity check, and the cheap single-run laws. */
  async problems(): Promise<string[]> {
    const problems: string[] = [];
    for (const pool of this.pools())
      for (const violation of pool.checkIntegrity()) problems.push(`pool ${pool.name}: ${violation.message}`);
    const laws = LAWS.filter((law) => !law.needs.twin && law.needs.baseline !== "compare" && !law.needs.oracle);
    const check = await checkLaws(this.source(), this.testCase, { laws });
    for (const law of check.results) if (law.status === "fails") problems.push(`${law.law}: ${law.violation?.message}`);
    return problems;
  }
}

/** Slots in use that some request holds (not only the prefix cache). */
export function slotsHeldByRequests(pool: KvPool): number {
  return pool.numUsedSlots() - pool.cacheOnlyPages() * pool.pageSize;
}

/** The simple model's answer for a request: its target-only greedy output, computed alone. */
export async function expectedOutput(
  testCase: Case,
  prompt: readonly number[],
  maxNewTokens: number,
): Promise<number[]> {
  const alone: Case = {
    ...testCase,
    engine: { ...testCase.engine, mode: "target-only", faults: [], multiLayer: undefined, graphReplay: undefined },
    workload: { requests: [{ id: 0, prompt: [...prompt], maxNewTokens, arrivalStep: 0 }], aborts: [] },
  };
  const result = await runCase(alone, { trace: false });
  return result.outputs[0].tokens;
}
