// Abort finality from the case's schedule and a trace: aborts landing while results are in flight, after a
// step's last forward and on a queued request hold on the reference engine, at the points the engine's own
// lifecycle records; a forward running the request after its abort, output past what its forwards produced
// before it, and an abort the engine drops without a trace (issue 25) each fail; a trace without steps says
// which field it lacks.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkAbortFinality } from "../../src/laws/abort-finality.ts";
import { placePoints } from "../../src/laws/schedule-points.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { schedulingCase } from "../helpers/scheduling-cases.ts";

describe("abort finality", async () => {
  // Request 0 aborted after a verify (in flight), request 1 after the step's last forward, request 2 queued.
  const testCase = schedulingCase(
    { overlap: true },
    {
      aborts: [
        { request: 0, step: 3, beforeForward: 2 },
        { request: 1, step: 4, beforeForward: 3 },
        { request: 2, step: 1, beforeForward: 0 },
      ],
    },
  );
  const { trace } = await runCase(testCase);
  const copy = (): Trace => structuredClone(trace);

  it("holds wherever the aborts land, queued requests included", () => {
    expect((trace.lifecycle ?? []).filter((entry) => entry.kind === "abort").map((entry) => entry.request)).toEqual([
      2, 0, 1,
    ]);
    expect(trace.events.some((event) => event.rows.some((row) => row.request === 2))).toBe(false);
    expect(trace.events.some((event) => event.rows.some((row) => row.discarded))).toBe(true);
    const result = checkAbortFinality(testCase, trace);
    expect(result.status).toBe("holds");
    expect(result.checked).toBe(3);
  });

  it("output past the abort point fails", () => {
    const broken = copy();
    broken.requests!.find((request) => request.id === 0)!.output.push(7, 7, 7, 7);
    const result = checkAbortFinality(testCase, broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(
      /the case aborts request 0 at step 3 before forward 2 \(before event \d+\) with \d+ tokens produced/,
    );
  });

  it("a forward running the request after its abort fails", () => {
    const broken = copy();
    const abort = broken.lifecycle!.find((entry) => entry.kind === "abort" && entry.request === 0)!;
    const later = broken.events.find((event) => event.index >= abort.beforeEvent && event.rows.length > 0)!;
    later.rows[0] = { ...later.rows[0], request: 0 };
    const result = checkAbortFinality(testCase, broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(
      /the case aborts request 0 at step 3 before forward 2 \(before event \d+\), but \w[\w-]* event \d+ runs it/,
    );
  });

  it("places the case's points where the engine's lifecycle records them", () => {
    const lifecycle = (trace.lifecycle ?? []).filter((entry) => entry.kind === "abort");
    for (const point of placePoints(testCase.workload.aborts, trace)) {
      const recorded = lifecycle.find((entry) => entry.request === point.request)!;
      expect(point.beforeEvent, `abort of request ${point.request}`).toBe(recorded.beforeEvent);
    }
  });

  it("an abort the engine drops without a trace fails (the lifecycle never mentions it)", async () => {
    const dropped = { ...testCase, engine: { ...testCase.engine, faults: ["abort-dropped-while-decoding" as const] } };
    const run = await runCase(dropped);
    expect((run.trace.lifecycle ?? []).some((entry) => entry.kind === "abort" && entry.request === 0)).toBe(false);
    const result = checkAbortFinality(dropped, run.trace);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(
      /the case aborts request \d at step \d before forward \d .*, but \S+ event \d+ runs it/,
    );
  });

  it("an abort past a step's last forward lands after that step", async () => {
    const late = {
      ...testCase,
      workload: { ...testCase.workload, aborts: [{ request: 0, step: 3, beforeForward: 40 }] },
    };
    const run = await runCase(late);
    const abort = (run.trace.lifecycle ?? []).find((entry) => entry.kind === "abort");
    expect(abort?.step).toBe(3);
    expect(run.outputs.find((output) => output.id === 0)?.finishReason).toBe("abort");
    expect(checkAbortFinality(late, run.trace).status).toBe("holds");
  });

  it("a trace whose events carry no step is not checkable, naming the field", () => {
    const stepless = copy();
    for (const event of stepless.events) delete event.step;
    const result = checkAbortFinality(testCase, stepless);
    expect(result.status).toBe("not-checkable");
    expect(result.reason).toMatch(/events\[\]\.step/);
  });

  it("a trace with outputs but no events (forwards not recorded) is not checkable", () => {
    const eventless = copy();
    eventless.events = [];
    const result = checkAbortFinality(testCase, eventless);
    expect(result.status).toBe("not-checkable");
    expect(result.reason).toMatch(/no events/);
  });
});
