// Law "per-step pools": in multi-layer drafting each draft step's forwards read and write only that
// step's pool (sglang PR 22954 left step 0's pool on the forward for every step). Read from the trace:
// every module uses exactly one pool, and no pool serves two modules.
import type { Trace } from "../trace/schema.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { Law } from "./definition.ts";

export const PER_STEP_POOLS = "per-step pools";

export function checkPerStepPools(trace: Trace): LawResult {
  const moduleEvents = trace.events.filter((event) => event.module !== undefined);
  if (moduleEvents.length === 0) return notCheckable(PER_STEP_POOLS, "the trace has no multi-layer (module) events");
  if (moduleEvents.some((event) => event.pool === undefined))
    return notCheckable(PER_STEP_POOLS, "module events carry no pool id");
  const tally = new LawTally(PER_STEP_POOLS);
  const poolOfModule = new Map<number, string>();
  const moduleOfPool = new Map<string, number>();
  for (const event of moduleEvents) {
    tally.checked += 1;
    const module = event.module!;
    const pool = event.pool!;
    const ownPool = poolOfModule.get(module);
    const owner = moduleOfPool.get(pool);
    if (ownPool !== undefined && ownPool !== pool) {
      tally.fail({
        event: event.index,
        message: `${event.phase} event ${event.index} runs module ${module} on pool ${pool}, but module ${module} earlier used pool ${ownPool}`,
      });
    } else if (owner !== undefined && owner !== module) {
      tally.fail({
        event: event.index,
        message: `${event.phase} event ${event.index} runs module ${module} on pool ${pool}, which belongs to module ${owner}`,
      });
    }
    if (ownPool === undefined) poolOfModule.set(module, pool);
    if (owner === undefined) moduleOfPool.set(pool, module);
  }
  return tally.result();
}

export const law: Law = {
  name: PER_STEP_POOLS,
  summary: "in multi-layer drafting each step's forwards read and write only that step's pool",
  appliesTo: (testCase) => testCase.engine.mode === "speculative" && testCase.engine.multiLayer === true,
  needs: {},
  check: ({ run }) => checkPerStepPools(run.trace),
};
