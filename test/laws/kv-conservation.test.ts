// KV conservation from the trace alone: the reference engine's traces record every slot release, and
// following slot ownership through them holds; a dropped release (a leak), a slot written while another
// request holds it, and a slot a retracted request still holds each fail with the place.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkSlotLifetimes, recordsReleases } from "../../src/laws/kv-conservation.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { goldenCase } from "../helpers/golden-runs.ts";

describe("slot lifetimes in a trace", async () => {
  const testCase = goldenCase("tiny-mirror", "chunked-paged").case;
  const { trace } = await runCase(testCase);
  const copy = (): Trace => structuredClone(trace);

  it("hold on the reference engine's trace, which records releases", () => {
    expect(recordsReleases(trace)).toBe(true);
    const result = checkSlotLifetimes(trace);
    expect(result.status).toBe("holds");
    expect(result.checked).toBeGreaterThan(10);
  });

  it("a release the engine never made is a leak: a temporary slot held into the next step", () => {
    const broken = copy();
    const verify = broken.events.find((event) => event.phase === "verify" && event.released?.length)!;
    const target = verify.released!.find((entry) => entry.pool === "target")!;
    const verifySlots = new Set(verify.rows.map((row) => row.slot));
    target.slots = target.slots.filter((slot) => !verifySlots.has(slot) || slot === target.slots[0]);
    const result = checkSlotLifetimes(broken);
    expect(result.status).toBe("fails");
    // Whichever comes first: the slot reused by another request, or still held when the step ends.
    expect(result.violation?.message).toMatch(/temporary row.*(still held after step|which request \d+ still holds)/);
  });

  it("a slot written while another request holds it fails at that row", () => {
    const broken = copy();
    const prefill = broken.events.find((event) => new Set(event.rows.map((row) => row.request)).size > 1)!;
    const [first, other] = [prefill.rows[0], prefill.rows.find((row) => row.request !== prefill.rows[0].request)!];
    other.slot = first.slot;
    const result = checkSlotLifetimes(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/which request \d+ still holds/);
    expect(result.violation?.event).toBe(prefill.index);
  });

  it("every slot must be released once every request finished", () => {
    const broken = copy();
    for (const event of broken.events) event.released = event.released?.map((entry) => ({ ...entry, slots: [] }));
    broken.events[0].released = [];
    const result = checkSlotLifetimes(broken);
    expect(result.status).toBe("fails");
  });
});
