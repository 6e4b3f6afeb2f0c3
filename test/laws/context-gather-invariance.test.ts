// Context-gather invariance: a case that gathers its context on the CPU EP (engine.runtime.gatherContext) runs
// the GPU EPs' feed, bit for bit the pool-fed run; a gather that feeds another row (planted in the gather
// itself, so the engine runs it as it would on a GPU) fails the law at the first event it changed.
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkContextGatherInvariance, poolFedTwin } from "../../src/laws/context-gather-invariance.ts";
import { ContextGather } from "../../src/runtime/context-gather.ts";
import type { Case } from "../../src/case/case.ts";
import { schedulingCase } from "../helpers/scheduling-cases.ts";

const base = schedulingCase({ prefixCache: true, chunkSize: 4 });
const gathered: Case = {
  ...base,
  engine: { ...base.engine, runtime: { ...base.engine.runtime, gatherContext: true } },
};

describe("context-gather invariance", () => {
  afterEach(() => vi.restoreAllMocks());

  it("holds: the gather runs on the CPU EP in the case that asks for it, and the twin feeds the pool", async () => {
    const gather = vi.spyOn(ContextGather.prototype, "gather");
    const run = (await runCase(gathered)).trace;
    const calls = gather.mock.calls.length;
    expect(calls).toBeGreaterThanOrEqual(run.events.length);
    const twin = poolFedTwin(gathered);
    expect(twin.engine.runtime).toEqual(base.engine.runtime);
    const pooled = (await runCase(twin)).trace;
    expect(gather.mock.calls.length, "the pool-fed twin gathers nothing").toBe(calls);
    const result = checkContextGatherInvariance(run, pooled);
    expect(result.status).toBe("holds");
    expect(result.checked).toBe(run.events.length + run.requests!.length);
  });

  it("a gather that feeds the previous slot's row in a context's last column fails", async () => {
    const original = ContextGather.prototype.gather;
    vi.spyOn(ContextGather.prototype, "gather").mockImplementation(function (
      this: ContextGather,
      keys,
      values,
      dims,
      slots,
    ) {
      const shifted = slots.slice();
      if (shifted.length >= 2 && shifted[shifted.length - 1] > 0n) shifted[shifted.length - 1] -= 1n;
      return original.call(this, keys, values, dims, shifted);
    });
    const run = (await runCase(gathered)).trace;
    vi.restoreAllMocks();
    const pooled = (await runCase(poolFedTwin(gathered))).trace;
    const result = checkContextGatherInvariance(run, pooled);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/fed the gathered context, .* fed the pool/);
  });
});
