import { describe, it, expect } from "vitest";
import { test, fc } from "@fast-check/vitest";
import { planPrefillChunks, type PrefillChunk } from "../../src/engine/scheduler.ts";
import { Request } from "../../src/engine/request.ts";

function request(id: number, promptLength: number, prefilledLength = 0): Request {
  const r = new Request({
    id,
    prompt: Array.from({ length: promptLength }, (_, i) => (i * 7 + id) % 50),
    maxNewTokens: 4,
    arrivalStep: 0,
  });
  r.status = "prefilling";
  r.prefilledLength = prefilledLength;
  return r;
}

/** The plan without the Request objects, for readable equality checks. */
function summary(chunks: readonly PrefillChunk[]): [number, number, number, boolean][] {
  return chunks.map((c) => [c.request.id, c.start, c.end, c.final]);
}

describe("planPrefillChunks", () => {
  it("plans one chunk of at most chunkSize tokens per request, from prefilledLength", () => {
    const a = request(1, 10);
    const b = request(2, 3);
    const c = request(3, 7, 2);
    expect(summary(planPrefillChunks([a, b, c], 4, 100))).toEqual([
      [1, 0, 4, false],
      [2, 0, 3, true],
      [3, 2, 6, false],
    ]);
    expect(planPrefillChunks([a], 4, 100)[0].request).toBe(a);
  });

  it("never plans two chunks for one request in a step, even with budget left", () => {
    const a = request(1, 20);
    expect(summary(planPrefillChunks([a], 5, 100))).toEqual([[1, 0, 5, false]]);
  });

  it("null chunk size takes the whole rest of the prompt", () => {
    const a = request(1, 13, 4);
    const b = request(2, 6);
    expect(summary(planPrefillChunks([a, b], null, 100))).toEqual([
      [1, 4, 13, true],
      [2, 0, 6, true],
    ]);
  });

  it("the token budget is shared across requests in arrival order; the last planned chunk may be cut by it", () => {
    const a = request(1, 10);
    const b = request(2, 10);
    const c = request(3, 10);
    expect(summary(planPrefillChunks([a, b, c], 4, 6))).toEqual([
      [1, 0, 4, false],
      [2, 0, 2, false],
    ]);
    // Arrival order is the order given: reversing it gives the budget to the other requests first.
    expect(summary(planPrefillChunks([c, b, a], 4, 6))).toEqual([
      [3, 0, 4, false],
      [2, 0, 2, false],
    ]);
    // A budget cut with null chunk size.
    expect(summary(planPrefillChunks([a, b], null, 13))).toEqual([
      [1, 0, 10, true],
      [2, 0, 3, false],
    ]);
  });

  it("final is set exactly when the chunk reaches the prompt's end, whatever limited it", () => {
    expect(summary(planPrefillChunks([request(1, 4)], 4, 100))).toEqual([[1, 0, 4, true]]); // chunk size = rest
    expect(summary(planPrefillChunks([request(1, 4)], 8, 4))).toEqual([[1, 0, 4, true]]); // budget = rest
    expect(summary(planPrefillChunks([request(1, 5)], 8, 4))).toEqual([[1, 0, 4, false]]); // budget < rest
    expect(summary(planPrefillChunks([request(1, 9, 8)], 4, 100))).toEqual([[1, 8, 9, true]]); // 1-token tail
  });

  it("plans nothing without budget, and skips fully prefilled requests without spending budget", () => {
    expect(planPrefillChunks([request(1, 5)], 4, 0)).toEqual([]);
    expect(planPrefillChunks([], 4, 10)).toEqual([]);
    const done = request(1, 5, 5);
    expect(summary(planPrefillChunks([done, request(2, 5)], 4, 3))).toEqual([[2, 0, 3, false]]);
  });

  it("is pure: planning does not advance any request", () => {
    const a = request(1, 10, 3);
    planPrefillChunks([a], 4, 100);
    planPrefillChunks([a], 4, 100);
    expect(a.prefilledLength).toBe(3);
    expect(summary(planPrefillChunks([a], 4, 100))).toEqual([[1, 3, 7, false]]);
  });

  const workload = fc.record({
    promptLengths: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }),
    chunkSize: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
    budget: fc.integer({ min: 1, max: 48 }),
  });

  test.prop([workload])(
    "planning and advancing prefilledLength covers every prompt once, in order, within budget and chunk size",
    ({ promptLengths, chunkSize, budget }) => {
      const requests = promptLengths.map((length, id) => request(id, length));
      let prefilling = [...requests];
      const covered = requests.map(() => [] as [number, number][]);
      const finals = requests.map(() => 0);
      // Every step makes progress (budget >= 1), so the total prompt length bounds the steps.
      const maxSteps = promptLengths.reduce((a, b) => a + b, 0);
      let steps = 0;
      while (prefilling.length > 0) {
        expect(++steps).toBeLessThanOrEqual(maxSteps);
        const plan = planPrefillChunks(prefilling, chunkSize, budget);
        expect(plan.length).toBeGreaterThan(0);
        // Budget and chunk size.
        expect(plan.reduce((sum, c) => sum + (c.end - c.start), 0)).toBeLessThanOrEqual(budget);
        // One chunk per request, in arrival order (ids are arrival indices).
        const ids = plan.map((c) => c.request.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort((x, y) => x - y)).toEqual(ids);
        // Arrival order also means no request is skipped while a later one gets budget: every request
        // before the last planned one is planned.
        expect(ids).toEqual(prefilling.slice(0, ids.length).map((r) => r.id));
        for (const chunk of plan) {
          const length = chunk.end - chunk.start;
          expect(length).toBeGreaterThan(0);
          if (chunkSize !== null) expect(length).toBeLessThanOrEqual(chunkSize);
          expect(chunk.start).toBe(chunk.request.prefilledLength);
          expect(chunk.end).toBeLessThanOrEqual(chunk.request.prompt.length);
          expect(chunk.final).toBe(chunk.end === chunk.request.prompt.length);
          // A chunk is only cut below min(rest, chunkSize) by the budget running out.
          const rest = chunk.request.prompt.length - chunk.start;
          if (length < Math.min(rest, chunkSize ?? rest)) expect(chunk).toBe(plan[plan.length - 1]);
          covered[chunk.request.id].push([chunk.start, chunk.end]);
          if (chunk.final) finals[chunk.request.id]++;
        }
        // The budget is used up to what the planned requests could take.
        const used = plan.reduce((sum, c) => sum + (c.end - c.start), 0);
        if (plan.length < prefilling.length) expect(used).toBe(budget);
        // Advance, as the engine does after running the chunks.
        for (const chunk of plan) chunk.request.prefilledLength = chunk.end;
        prefilling = prefilling.filter((r) => r.prefilledLength < r.prompt.length);
      }
      requests.forEach((r, id) => {
        // Contiguous, in order, exactly [0, n), with exactly one final chunk: the last one.
        const chunks = covered[id];
        expect(chunks[0][0]).toBe(0);
        for (let i = 1; i < chunks.length; i++) expect(chunks[i][0]).toBe(chunks[i - 1][1]);
        expect(chunks[chunks.length - 1][1]).toBe(r.prompt.length);
        expect(finals[id]).toBe(1);
        expect(r.prefilledLength).toBe(r.prompt.length);
      });
    },
  );
});
