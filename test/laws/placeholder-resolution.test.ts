// Placeholder resolution from a trace: an overlapped run resolves every placeholder to its own request's
// latest output; a placeholder fed to the model, a ring entry another request wrote last, and a value that is
// not the one written each fail at that row.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkPlaceholderResolution } from "../../src/laws/placeholder-resolution.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { schedulingCase } from "../helpers/scheduling-cases.ts";

describe("placeholder resolution", async () => {
  const { trace } = await runCase(schedulingCase({ overlap: true }));
  const copy = (): Trace => structuredClone(trace);
  const planned = (broken: Trace) =>
    broken.events.flatMap((event) =>
      event.rows.filter((row) => row.placeholder !== undefined).map((row) => ({ event, row })),
    );

  it("holds on an overlapped run, whose rows were planned with placeholders", () => {
    expect(planned(trace).length).toBeGreaterThan(5);
    const result = checkPlaceholderResolution(trace);
    expect(result.status).toBe("holds");
  });

  it("a placeholder reaching the model fails", () => {
    const broken = copy();
    const { event, row } = planned(broken)[2];
    row.token = row.placeholder!;
    const result = checkPlaceholderResolution(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.event).toBe(event.index);
    expect(result.violation?.message).toMatch(/feeds token -\d+ to the model: an unresolved placeholder/);
  });

  it("an entry another request wrote last fails (the ring wrapped)", () => {
    const broken = copy();
    const { row } = planned(broken).find(({ row }) => row.request === 1)!;
    const write = broken.events
      .flatMap((event) => event.futures ?? [])
      .filter((future) => future.placeholder === row.placeholder && future.request === row.request)
      .at(-1)!;
    write.request = 0;
    const result = checkPlaceholderResolution(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/resolved a placeholder wrongly/);
  });

  it("a value other than the one written fails", () => {
    const broken = copy();
    const { row } = planned(broken).find(({ event, row }) => event.phase === "verify" && row.parent === -1)!;
    row.token = (row.token + 1) % 64;
    const result = checkPlaceholderResolution(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/the token is \d+, placeholder -\d+ holds \d+/);
  });
});
