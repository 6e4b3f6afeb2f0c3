// Abort finality from a trace: aborts landing while results are in flight, after a step's last forward and on
// a queued request hold on the reference engine; a forward running the request after its abort, and output
// past what its forwards produced before it, each fail.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkAbortFinality } from "../../src/laws/abort-finality.ts";
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
    const result = checkAbortFinality(trace);
    expect(result.status).toBe("holds");
    expect(result.checked).toBe(3);
  });

  it("output past the abort point fails", () => {
    const broken = copy();
    broken.requests!.find((request) => request.id === 0)!.output.push(7, 7, 7, 7);
    const result = checkAbortFinality(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/request 0 was aborted before event \d+ with \d+ tokens produced/);
  });

  it("a forward running the request after its abort fails", () => {
    const broken = copy();
    const abort = broken.lifecycle!.find((entry) => entry.kind === "abort" && entry.request === 0)!;
    const later = broken.events.find((event) => event.index >= abort.beforeEvent && event.rows.length > 0)!;
    later.rows[0] = { ...later.rows[0], request: 0 };
    const result = checkAbortFinality(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/request 0 was aborted before event \d+, but \w[\w-]* event \d+ runs it/);
  });
});
