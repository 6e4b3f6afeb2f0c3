// Request slots (issue 28, item 3): requests take the lowest free slot and later requests reuse it; a slot's
// drafter state (prompt lookup's n-gram history) begins afresh for each request, and with the fault keeps the
// previous request's tokens past which the next request's are ingested (llama.cpp#27852).
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import { Faults } from "../../src/case/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { SlotDrafter } from "../../src/engine/slot-drafter.ts";
import { reusedSlots } from "../../src/laws/slot-history.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";

describe("SlotDrafter", () => {
  const previous = [1, 5, 9, 13, 17, 3, 40, 41, 42];
  const next = [1, 5, 9, 13, 17, 4];

  it("a request beginning on the slot proposes from its own tokens only", () => {
    const drafter = new SlotDrafter();
    drafter.historyOf(previous, previous.length);
    drafter.begin(new Faults([]));
    expect(drafter.historyOf(next, next.length)).toEqual(next);
    expect(drafter.historyOf([...next, 7], next.length + 1)).toEqual([...next, 7]);
  });

  it("with the fault it keeps the previous request's tokens and ingests only past their watermark", () => {
    const drafter = new SlotDrafter();
    drafter.historyOf(previous, previous.length);
    drafter.begin(new Faults(["drafter-state-kept-on-slot-reuse"]));
    expect(drafter.historyOf(next, next.length)).toEqual(previous);
    const longer = [...next, 7, 8, 9, 10];
    expect(drafter.historyOf(longer, longer.length)).toEqual([...previous, 10]);
  });

  it("a retract rolls the history back; the re-prefill ingests it again", () => {
    const drafter = new SlotDrafter();
    drafter.historyOf(next, next.length);
    drafter.rollBack();
    expect(drafter.historyOf(next, 3)).toEqual(next.slice(0, 3));
  });
});

describe("request slots in the engine", () => {
  const testCase: Case = {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec("ngram"),
    engine: defaultEngineConfig({ numSteps: 2, requestSlots: 1 }),
    workload: {
      requests: [
        { id: 0, prompt: [1, 5, 9, 13, 17, 3], maxNewTokens: 6, arrivalStep: 0 },
        { id: 1, prompt: [1, 5, 9, 13, 17, 4], maxNewTokens: 4, arrivalStep: 0 },
      ],
      aborts: [],
    },
  };

  it("one slot: the second request waits for the first to end, then runs on the same slot", async () => {
    const { trace } = await runCase(testCase);
    expect(trace.requests!.map((request) => request.slot)).toEqual([0, 0]);
    const eventsOf = (id: number) =>
      trace.events.filter((event) => event.rows.some((row) => row.request === id)).map((event) => event.index);
    expect(Math.min(...eventsOf(1))).toBeGreaterThan(Math.max(...eventsOf(0)));
    expect(reusedSlots(trace)).toEqual([1]);
  });

  it("without request slots the requests share forwards and the trace names no slot", async () => {
    const { requestSlots, ...engine } = testCase.engine;
    void requestSlots;
    const { trace } = await runCase({ ...testCase, engine });
    expect(trace.requests!.map((request) => request.slot)).toEqual([undefined, undefined]);
    expect(trace.events.some((event) => new Set(event.rows.map((row) => row.request)).size === 2)).toBe(true);
  });
});
