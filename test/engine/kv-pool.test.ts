import { describe, it, expect } from "vitest";
import { test, fc } from "@fast-check/vitest";
import { KvPool, KvPoolExhaustedError, type KvDtype, type KvPoolOptions } from "../../src/engine/kv-pool.ts";

function makePool(overrides: Partial<KvPoolOptions> = {}): KvPool {
  return new KvPool({ name: "target", numSlots: 16, pageSize: 4, layers: 2, kvDim: 3, dtype: "float32", ...overrides });
}

/** Everything observable about ownership, to prove a failed call changed nothing. */
function snapshot(pool: KvPool): unknown {
  const owners = Array.from({ length: pool.numSlots }, (_, slot) => pool.ownerOf(slot));
  const tables = pool.requests().map((request) => ({
    request,
    length: pool.persistedLength(request),
    slots: Array.from({ length: pool.persistedLength(request) }, (_, q) => pool.slotOf(request, q)),
    temporary: pool.temporarySlots(request),
  }));
  return { free: pool.numFreeSlots(), owners, tables };
}

describe("KvPool construction", () => {
  it("allocates [layers, numSlots, kvDim] buffers of the requested dtype", () => {
    const pool = makePool({ dtype: "float64" });
    expect(pool.keys).toBeInstanceOf(Float64Array);
    expect(pool.values.length).toBe(2 * 16 * 3);
    expect(makePool().keys).toBeInstanceOf(Float32Array);
    expect(pool.numFreeSlots()).toBe(16);
    expect(pool.numUsedSlots()).toBe(0);
    expect(pool.checkIntegrity()).toEqual([]);
  });

  it.each([
    [{ pageSize: 0 }, /pageSize/],
    [{ numSlots: 0 }, /numSlots/],
    [{ numSlots: 10, pageSize: 4 }, /multiple of pageSize/],
    [{ layers: 0 }, /layers/],
    [{ kvDim: 1.5 }, /kvDim/],
    [{ dtype: "float16" as KvDtype }, /dtype/],
  ])("rejects %o", (overrides, message) => {
    expect(() => makePool(overrides)).toThrow(message);
  });
});

describe("persisted positions", () => {
  it("maps positions into pages at offset position % pageSize, lowest free page first", () => {
    const pool = makePool();
    expect(pool.extendPersisted(7, 3)).toEqual([0, 1, 2]);
    expect(pool.extendPersisted(8, 2)).toEqual([4, 5]);
    expect(pool.extendPersisted(7, 6)).toEqual([3, 8, 9]);
    expect(pool.slotOf(7, 4)).toBe(8);
    expect(pool.slotOf(7, 6)).toBeUndefined();
    expect(pool.ownerOf(9)).toEqual({ request: 7, position: 5, temporary: false });
    expect(pool.persistedLength(7)).toBe(6);
    expect(pool.requests()).toEqual([7, 8]);
    expect(pool.numFreeSlots()).toBe(4);
    expect(pool.extendPersisted(7, 6)).toEqual([]);
    expect(() => pool.extendPersisted(7, 5)).toThrow(/below length/);
    expect(pool.checkIntegrity()).toEqual([]);
  });

  it("truncate frees pages that become empty and keeps partial ones", () => {
    const pool = makePool();
    pool.extendPersisted(1, 10);
    pool.truncatePersisted(1, 5);
    expect(pool.numFreeSlots()).toBe(8);
    expect(pool.ownerOf(5)).toBeUndefined();
    expect(pool.slotOf(1, 4)).toBe(4);
    expect(() => pool.truncatePersisted(1, 6)).toThrow(/outside/);
    pool.truncatePersisted(1, 0);
    expect(pool.requests()).toEqual([]);
    expect(pool.numFreeSlots()).toBe(16);
    expect(pool.checkIntegrity()).toEqual([]);
  });

  it("reuses the lowest freed page", () => {
    const pool = makePool();
    pool.extendPersisted(1, 4);
    pool.extendPersisted(2, 4);
    pool.extendPersisted(3, 4);
    pool.freeRequest(2);
    expect(pool.extendPersisted(4, 1)).toEqual([4]);
    expect(pool.extendPersisted(5, 1)).toEqual([12]);
  });

  it("page size 1 behaves as a plain slot allocator", () => {
    const pool = makePool({ numSlots: 4, pageSize: 1 });
    expect(pool.extendPersisted(1, 2)).toEqual([0, 1]);
    expect(pool.extendPersisted(2, 1)).toEqual([2]);
    pool.truncatePersisted(1, 1);
    expect(pool.extendPersisted(2, 3)).toEqual([1, 3]);
    expect(pool.numFreeSlots()).toBe(0);
    expect(pool.checkIntegrity()).toEqual([]);
  });
});

describe("temporary slots", () => {
  it("come from pages of their own, filling partly used pages first", () => {
    const pool = makePool();
    pool.extendPersisted(1, 2);
    expect(pool.allocateTemporary(1, 3)).toEqual([4, 5, 6]);
    expect(pool.ownerOf(5)).toEqual({ request: 1, position: -1, temporary: true });
    pool.setTemporaryPosition(5, 9);
    expect(pool.ownerOf(5)).toEqual({ request: 1, position: 9, temporary: true });
    expect(pool.allocateTemporary(1, 2)).toEqual([7, 8]);
    expect(pool.temporarySlots(1)).toEqual([4, 5, 6, 7, 8]);
    // Persisted growth never lands in a temporary page.
    expect(pool.extendPersisted(1, 5)).toEqual([2, 3, 12]);
    expect(pool.checkIntegrity()).toEqual([]);
  });

  it("fills a partly used page before a lower newly freed page", () => {
    const pool = makePool();
    pool.extendPersisted(1, 4);
    pool.allocateTemporary(2, 3); // page 1, slots 4..6
    pool.freeRequest(1); // page 0 free again
    expect(pool.allocateTemporary(2, 2)).toEqual([7, 0]);
  });

  it("frees a temporary page only once all its slots are freed", () => {
    const pool = makePool();
    const slots = pool.allocateTemporary(3, 6);
    expect(slots).toEqual([0, 1, 2, 3, 4, 5]);
    pool.freeTemporary(3, [0, 1, 4]);
    expect(pool.numFreeSlots()).toBe(8);
    pool.freeTemporary(3, [5]);
    expect(pool.numFreeSlots()).toBe(12);
    expect(pool.allocateTemporary(3, 2)).toEqual([0, 1]);
    expect(() => pool.freeTemporary(3, [7])).toThrow(/not a temporary slot/);
    expect(() => pool.freeTemporary(3, [2, 2])).toThrow(/duplicate/);
    expect(() => pool.setTemporaryPosition(7, 1)).toThrow(/not a temporary slot/);
    pool.freeTemporary(3);
    expect(pool.requests()).toEqual([]);
    expect(pool.numFreeSlots()).toBe(16);
    expect(pool.checkIntegrity()).toEqual([]);
  });

  it("abort mid-way (freeRequest with persisted and temporary slots) frees everything", () => {
    const pool = makePool({ pageSize: 1, numSlots: 8 });
    pool.extendPersisted(1, 3);
    pool.extendPersisted(2, 2);
    pool.allocateTemporary(1, 2);
    pool.freeRequest(1);
    pool.freeRequest(99);
    expect(pool.requests()).toEqual([2]);
    expect(pool.numFreeSlots()).toBe(6);
    expect(pool.checkIntegrity()).toEqual([]);
  });
});

describe("exhaustion", () => {
  it("throws KvPoolExhaustedError and changes nothing", () => {
    const pool = makePool();
    pool.extendPersisted(1, 5);
    pool.allocateTemporary(2, 1);
    const before = snapshot(pool);
    const persisted = (() => {
      try {
        pool.extendPersisted(1, 14);
      } catch (error) {
        return error;
      }
    })();
    expect(persisted).toBeInstanceOf(KvPoolExhaustedError);
    expect(persisted).toMatchObject({ pool: "target", requested: 8, free: 4 });
    expect(() => pool.allocateTemporary(2, 8)).toThrow(KvPoolExhaustedError);
    expect(() => pool.allocateTemporary(3, 5)).toThrow(KvPoolExhaustedError);
    expect(snapshot(pool)).toEqual(before);
    expect(pool.requests()).toEqual([1, 2]);
    expect(pool.allocateTemporary(2, 7)).toHaveLength(7); // 3 spare + one new page fits
    expect(pool.checkIntegrity()).toEqual([]);
  });
});

describe("data movement", () => {
  it.each(["float32", "float64"] as const)("writeRows and copySlot move every layer (%s)", (dtype) => {
    const pool = makePool({ dtype, pageSize: 1, numSlots: 6 });
    const slots = pool.extendPersisted(1, 4);
    const { layers, kvDim, numSlots } = pool;
    const numRows = 5;
    const ArrayType = dtype === "float32" ? Float32Array : Float64Array;
    const newKeys = new ArrayType(layers * numRows * kvDim).map((_, i) => i + 0.5);
    const newValues = newKeys.map((x) => -x);
    pool.writeRows([slots[3], slots[1]], newKeys, newValues, numRows, 2);
    const row = (array: Float32Array | Float64Array, layer: number, index: number, count: number) =>
      Array.from(array.subarray((layer * count + index) * kvDim, (layer * count + index + 1) * kvDim));
    for (let layer = 0; layer < layers; layer++) {
      expect(row(pool.keys, layer, slots[3], numSlots)).toEqual(row(newKeys, layer, 2, numRows));
      expect(row(pool.values, layer, slots[1], numSlots)).toEqual(row(newValues, layer, 3, numRows));
      expect(row(pool.keys, layer, slots[0], numSlots)).toEqual([0, 0, 0]);
    }
    pool.copySlot(slots[3], slots[0]);
    for (let layer = 0; layer < layers; layer++) {
      expect(row(pool.keys, layer, slots[0], numSlots)).toEqual(row(newKeys, layer, 2, numRows));
      expect(row(pool.values, layer, slots[0], numSlots)).toEqual(row(newValues, layer, 2, numRows));
    }
  });

  it("rejects bad shapes, dtypes and unowned slots", () => {
    const pool = makePool({ pageSize: 1 });
    pool.extendPersisted(1, 2);
    const rows = new Float32Array(2 * 2 * 3);
    expect(() => pool.writeRows([0, 1], rows, rows, 2, 1)).toThrow(/exceed numRows/);
    expect(() => pool.writeRows([0], rows, rows, 3)).toThrow(/length/);
    expect(() => pool.writeRows([0], new Float64Array(12), rows, 2)).toThrow(/dtype/);
    expect(() => pool.writeRows([5], rows, rows, 2)).toThrow(/not owned/);
    expect(() => pool.copySlot(0, 5)).toThrow(/not owned/);
    expect(() => pool.copySlot(0, 99)).toThrow(/out of range/);
  });
});

describe("release", () => {
  it("recycles the buffers zeroed: the next pool of that shape starts all zeros on the same memory", () => {
    const options = { numSlots: 32, pageSize: 2, layers: 3, kvDim: 5, dtype: "float64" as const };
    const pool = makePool(options);
    const [a] = pool.extendPersisted(1, 2);
    const [temp] = pool.allocateTemporary(2, 1);
    const [highest] = pool.extendPersisted(3, 1); // written only by copySlot
    const rows = Float64Array.from({ length: 3 * 2 * 5 }, (_, i) => i + 1);
    pool.writeRows([a, temp], rows, rows, 2);
    pool.copySlot(temp, highest);
    const { keys, values } = pool;
    expect(keys.some((value) => value !== 0)).toBe(true);
    pool.release();
    expect(() => pool.keys).toThrow(/used after release/);
    expect(() => pool.writeRows([a], rows.subarray(0, 15), rows.subarray(0, 15), 1)).toThrow(/used after release/);
    const next = makePool(options);
    expect([next.keys, next.values].every((buffer) => buffer === keys || buffer === values)).toBe(true);
    expect(next.keys.every((value) => value === 0) && next.values.every((value) => value === 0)).toBe(true);
  });
});

describe("checkIntegrity detects corruption", () => {
  function healthyPool(): KvPool {
    const pool = makePool({ numSlots: 32 });
    pool.extendPersisted(1, 5);
    pool.extendPersisted(2, 3);
    pool.allocateTemporary(2, 2);
    expect(pool.checkIntegrity()).toEqual([]);
    return pool;
  }

  it("a slot owned by two requests", () => {
    const pool = healthyPool();
    const internals = pool.internalsForTest();
    internals.tables.get(2)!.persistedPages[0] = internals.tables.get(1)!.persistedPages[0];
    const messages = pool
      .checkIntegrity()
      .map((v) => v.message)
      .join("\n");
    expect(messages).toMatch(/slot owned twice/);
    expect(messages).toMatch(/claimed 2 times/);
  });

  it("a slot owned twice within one request", () => {
    const pool = healthyPool();
    const table = pool.internalsForTest().tables.get(1)!;
    table.persistedPages[1] = table.persistedPages[0];
    expect(pool.checkIntegrity().map((v) => v.message)).toContainEqual(expect.stringMatching(/slot owned twice/));
  });

  it("a leaked page missing from the free list", () => {
    const pool = healthyPool();
    const leaked = pool.internalsForTest().freePages.pop();
    expect(leaked).toBe(4);
    expect(pool.checkIntegrity()).toContainEqual(
      expect.objectContaining({ pool: "target", slot: 16, message: expect.stringMatching(/page 4 leaked/) }),
    );
  });

  it("a slot reverse map that disagrees with the tables", () => {
    const pool = healthyPool();
    const { slotOwners } = pool.internalsForTest();
    slotOwners[pool.slotOf(1, 2)!] = { request: 1, position: 3, temporary: false };
    slotOwners[15] = { request: 2, position: -1, temporary: true };
    const violations = pool.checkIntegrity();
    expect(violations.map((v) => v.slot)).toEqual([2, 15]);
    expect(violations[0].message).toMatch(/reverse map says request 1 position 3, tables say request 1 position 2/);
  });

  it("a page reverse map, length and temporary table mismatch", () => {
    const pool = healthyPool();
    const internals = pool.internalsForTest();
    internals.pageOwners[0] = { request: 2, temporary: false };
    internals.tables.get(2)!.persistedLength = 9;
    internals.tables.get(2)!.temporarySlots.add(0);
    const messages = pool
      .checkIntegrity()
      .map((v) => v.message)
      .join("\n");
    expect(messages).toMatch(/page 0 reverse map/);
    expect(messages).toMatch(/persisted pages for length 9/);
    expect(messages).toMatch(/persisted positions 4..8 have no page/);
    expect(messages).toMatch(/temporary slot outside/);
  });

  it("a page both free and owned", () => {
    const pool = healthyPool();
    pool.internalsForTest().freePages.push(0);
    expect(
      pool
        .checkIntegrity()
        .map((v) => v.message)
        .join("\n"),
    ).toMatch(/page 0 claimed 2 times/);
  });
});

type Op =
  | { kind: "extend"; request: number; grow: number }
  | { kind: "truncate"; request: number; fraction: number }
  | { kind: "temp"; request: number; count: number }
  | { kind: "freeTemp"; request: number; pick: number[] }
  | { kind: "setPos"; request: number; pick: number; position: number }
  | { kind: "free"; request: number };

const request = fc.integer({ min: 0, max: 3 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("extend" as const), request, grow: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant("truncate" as const), request, fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant("temp" as const), request, count: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant("freeTemp" as const), request, pick: fc.array(fc.nat(), { maxLength: 4 }) }),
  fc.record({ kind: fc.constant("setPos" as const), request, pick: fc.nat(), position: fc.nat({ max: 50 }) }),
  fc.record({ kind: fc.constant("free" as const), request }),
);

describe("random operation sequences", () => {
  test.prop([fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 40 })])(
    "keep integrity, match a model, and end with every slot free",
    (pageSize, numPages, ops) => {
      const pool = makePool({ pageSize, numSlots: pageSize * numPages, layers: 1, kvDim: 1 });
      const lengths = new Map<number, number>();
      const temporaries = new Map<number, number[]>();
      const pagesHeld = () => {
        let pages = 0;
        for (const length of lengths.values()) pages += Math.ceil(length / pageSize);
        for (const slots of temporaries.values()) pages += new Set(slots.map((s) => Math.floor(s / pageSize))).size;
        return pages;
      };
      for (const o of ops) {
        const length = lengths.get(o.request) ?? 0;
        const temps = temporaries.get(o.request) ?? [];
        const freePages = numPages - pagesHeld();
        const before = snapshot(pool);
        if (o.kind === "extend") {
          const needed = Math.ceil((length + o.grow) / pageSize) - Math.ceil(length / pageSize);
          if (needed > freePages) {
            expect(() => pool.extendPersisted(o.request, length + o.grow)).toThrow(KvPoolExhaustedError);
            expect(snapshot(pool)).toEqual(before);
          } else {
            const slots = pool.extendPersisted(o.request, length + o.grow);
            expect(slots).toHaveLength(o.grow);
            lengths.set(o.request, length + o.grow);
          }
        } else if (o.kind === "truncate") {
          const newLength = Math.floor(length * o.fraction);
          pool.truncatePersisted(o.request, newLength);
          lengths.set(o.request, newLength);
        } else if (o.kind === "temp") {
          const spare = new Set(temps.map((s) => Math.floor(s / pageSize))).size * pageSize - temps.length;
          if (Math.ceil(Math.max(0, o.count - spare) / pageSize) > freePages) {
            expect(() => pool.allocateTemporary(o.request, o.count)).toThrow(KvPoolExhaustedError);
            expect(snapshot(pool)).toEqual(before);
          } else {
            const slots = pool.allocateTemporary(o.request, o.count);
            expect(slots).toHaveLength(o.count);
            temporaries.set(o.request, [...temps, ...slots]);
          }
        } else if (o.kind === "freeTemp") {
          const chosen = [...new Set(o.pick.filter((i) => i < temps.length).map((i) => temps[i]))];
          pool.freeTemporary(o.request, chosen);
          temporaries.set(
            o.request,
            temps.filter((s) => !chosen.includes(s)),
          );
        } else if (o.kind === "setPos") {
          if (temps.length > 0) pool.setTemporaryPosition(temps[o.pick % temps.length], o.position);
        } else {
          pool.freeRequest(o.request);
          lengths.delete(o.request);
          temporaries.delete(o.request);
        }
        expect(pool.checkIntegrity()).toEqual([]);
        expect(pool.numFreeSlots()).toBe((numPages - pagesHeld()) * pageSize);
        for (const [r, len] of lengths) {
          expect(pool.persistedLength(r)).toBe(len);
          for (let q = 0; q < len; q++) {
            const slot = pool.slotOf(r, q)!;
            expect(slot % pageSize).toBe(q % pageSize);
            expect(pool.ownerOf(slot)).toEqual({ request: r, position: q, temporary: false });
          }
        }
        for (const [r, slots] of temporaries) expect(pool.temporarySlots(r)).toEqual([...slots].sort((a, b) => a - b));
      }
      for (const r of pool.requests()) pool.freeRequest(r);
      expect(pool.numFreeSlots()).toBe(pool.numSlots);
      expect(pool.requests()).toEqual([]);
      expect(pool.checkIntegrity()).toEqual([]);
    },
  );
});
