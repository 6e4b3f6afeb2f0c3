// The forward memo (engine/forward-memo.ts) is invisible: a case's runs give byte-identical results with
// and without it, while it does save forwards; and its key is every input (a changed token, mask value,
// hidden value or gathered K/V row is a miss), with the K/V rows named by the pool's content ids.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ForwardMemo } from "../../src/engine/forward-memo.ts";
import { KvPool } from "../../src/engine/kv-pool.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { LAWS } from "../../src/laws/registry.ts";
import { targetOnlyCase } from "../../src/check/source.ts";
import type { ForwardFeeds, ForwardResult, ModelSession } from "../../src/runtime/ort.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { FULL_SPACE } from "../../src/properties/arbitraries/space.ts";

/** A session stand-in whose outputs are a function of the inputs; counts the runs. */
function fakeSession(): ModelSession & { runs: number } {
  const session = {
    runs: 0,
    async run(feeds: ForwardFeeds): Promise<ForwardResult> {
      session.runs += 1;
      const rows = feeds.tokens.length;
      let sum = Number(feeds.tokens[0]);
      for (const value of feeds.mask) sum += value;
      return {
        topValues: Float32Array.of(sum),
        topIndices: BigInt64Array.of(1n),
        topK: 1,
        logNormalizer: new Float32Array(rows),
        hidden: new Float32Array(rows),
        kNew: new Float32Array(rows),
        vNew: new Float32Array(rows),
      };
    },
  };
  return session as unknown as ModelSession & { runs: number };
}

function feeds(token = 5n, maskValue = 0): ForwardFeeds {
  const cache = new Float32Array(4);
  return {
    tokens: BigInt64Array.of(token),
    positions: BigInt64Array.of(3n),
    kCache: cache,
    vCache: cache,
    cacheDims: [1, 4, 1],
    ctxSlots: BigInt64Array.of(0n, 1n),
    mask: Float32Array.of(0, maskValue, 0),
  };
}

describe("forward memo", () => {
  it("keys on every input: tokens, mask, gathered K/V content and session", async () => {
    const memo = new ForwardMemo();
    const session = fakeSession();
    const other = fakeSession();
    const content = Float64Array.of(0, 7);
    const first = await memo.run(session, feeds(), content);
    const again = await memo.run(session, feeds(), Float64Array.of(0, 7));
    expect(session.runs).toBe(1);
    expect(again.contentBase).toBe(first.contentBase);
    expect(again.result).toEqual(first.result);
    again.result.topValues[0] = 99; // a caller's copy: the memo keeps its own
    expect((await memo.run(session, feeds(), content)).result.topValues[0]).toBe(first.result.topValues[0]);
    await memo.run(session, feeds(6n), content);
    await memo.run(session, feeds(5n, -1e9), content);
    await memo.run(session, feeds(), Float64Array.of(0, 8));
    await memo.run(session, { ...feeds(), hiddenIn: Float32Array.of(1) }, content);
    expect(session.runs).toBe(5);
    await memo.run(other, feeds(), content);
    expect(other.runs).toBe(1);
    expect(memo.hits).toBe(2);
  });

  it("pools name each slot's K/V: written rows get their forward's ids, copies carry them, fresh pools are zero", () => {
    const pool = new KvPool({ name: "target", numSlots: 8, pageSize: 1, layers: 1, kvDim: 1, dtype: "float32" });
    const slots = pool.extendPersisted(1, 3);
    expect([...pool.contentOf(slots)]).toEqual([0, 0, 0]);
    pool.writeRows(slots.slice(0, 2), Float32Array.of(1, 2), Float32Array.of(1, 2), 2, 0, 1000);
    pool.copySlot(slots[1], slots[2]);
    expect([...pool.contentOf(slots)]).toEqual([1000, 1001, 1001]);
    pool.writeRows([slots[0]], Float32Array.of(3), Float32Array.of(3), 1);
    const [fresh] = pool.contentOf([slots[0]]);
    expect(fresh).not.toBe(1000);
    expect(fresh).toBeGreaterThan(0);
  });

  it("leaves every run of generated cases byte-identical while saving forwards", { timeout: 120_000 }, async () => {
    let hits = 0;
    for (const testCase of fc.sample(caseArbitrary(FULL_SPACE), { seed: 9, numRuns: 16 })) {
      // The runs the law runner asks for: the case, its baseline, every twin, and all composable twins at once.
      const twins = LAWS.flatMap((law) => (law.needs.twin ? [law.needs.twin] : []));
      const canonical = twins.filter((twin) => twin.composable).reduce((c, twin) => twin.of(c), testCase);
      const variants = [testCase, targetOnlyCase(testCase), canonical, ...twins.map((twin) => twin.of(testCase))];
      const memo = new ForwardMemo();
      for (const variant of variants) {
        const plain = JSON.stringify(await runCase(variant));
        const memoized = JSON.stringify(await runCase(variant, { forwardMemo: memo }));
        expect(memoized).toBe(plain);
      }
      hits += memo.hits;
    }
    expect(hits).toBeGreaterThan(100);
  });
});
