// KV conservation from the trace alone: the reference engine's traces record every slot release, and
// following slot ownership through them holds; a dropped release (a leak), a slot written while another
// request holds it, and a slot a retracted request still holds each fail with the place.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import { checkSlotLifetimes, recordsReleases } from "../../src/laws/kv-conservation.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { goldenCase } from "../helpers/golden-runs.ts";
import { minimumPoolSlots } from "../../src/case/limits.ts";
import { schedulingCase } from "../helpers/scheduling-cases.ts";

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

describe("reference-counted slots in a trace (prefix cache)", async () => {
  // A pool of one request's reservation: the cache evicts while a hit's pages are shared.
  const testCase = schedulingCase({ prefixCache: true, pageSize: 3 });
  testCase.engine.poolSlots = minimumPoolSlots(testCase);
  const { trace } = await runCase(testCase);
  const copy = (): Trace => structuredClone(trace);
  const changes = (broken: Trace) =>
    broken.events.flatMap((event) => (event.references ?? []).map((change) => ({ event, change })));

  it("hold on the reference engine's trace: hits, evictions and the flush followed holder by holder", () => {
    const kinds = new Set(changes(trace).map(({ change }) => `${change.change}:${change.reason ?? ""}`));
    expect([...kinds].sort()).toEqual([
      "acquire:",
      "drop:",
      "drop:evict",
      "drop:flush",
      "free:",
      "free:evict",
      "free:flush",
      "write:",
    ]);
    expect((trace.lifecycle ?? []).some((entry) => entry.kind === "prefix-hit")).toBe(true);
    const result = checkSlotLifetimes(trace);
    expect(result.status).toBe("holds");
  });

  it("a slot freed while a holder is left fails", () => {
    const broken = copy();
    // The first request drop that is followed by a free of the same slots: its drop goes missing.
    const all = changes(broken);
    const at = all.findIndex(
      ({ change }, i) =>
        change.change === "drop" &&
        change.holder >= 0 &&
        all.slice(i + 1).some(({ change: next }) => next.change === "free" && next.slots.includes(change.slots[0])),
    );
    const { event, change } = all[at];
    event.references = event.references!.filter((candidate) => candidate !== change);
    const result = checkSlotLifetimes(broken);
    expect(result.status).toBe("fails");
    expect(result.violation?.message).toMatch(/frees pool \w+ slot \d+ .* while it is still held/);
  });

  it("a reference taken on a free slot, and a drop by a non-holder, fail", () => {
    const taken = copy();
    const hit = changes(taken).find(({ change }) => change.change === "acquire" && change.holder >= 0)!;
    hit.change.slots = [testCase.engine.poolSlots - 1];
    expect(checkSlotLifetimes(taken).violation?.message).toMatch(
      /takes a reference on pool \w+ slot \d+, which holds nothing written/,
    );
    const dropped = copy();
    const drop = changes(dropped).find(({ change }) => change.change === "drop" && change.holder >= 0)!;
    drop.change.holder = 7;
    expect(checkSlotLifetimes(dropped).violation?.message).toMatch(
      /request 7 drops pool \w+ slot \d+, which it does not hold/,
    );
  });

  it("a request still holding a slot at the end fails; the cache keeping pages does not", () => {
    const unflushed = copy();
    for (const { event, change } of changes(unflushed))
      if (change.reason === "flush") event.references = event.references!.filter((candidate) => candidate !== change);
    expect(checkSlotLifetimes(unflushed).status).toBe("holds");
    const kept = copy();
    const last = changes(kept)
      .filter(({ change }) => change.change === "drop" && change.holder >= 0)
      .at(-1)!;
    last.event.references = last.event.references!.filter((candidate) => candidate !== last.change);
    expect(checkSlotLifetimes(kept).status).toBe("fails");
  });
});
