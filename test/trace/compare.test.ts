import { describe, expect, it } from "vitest";
import { fc, test } from "@fast-check/vitest";
import { compareTokenAgainstLogits, compareTokens, topMargin } from "../../src/trace/compare.ts";

const EPS = 1e-4;

describe("compareTokens", () => {
  it("equal sequences", () => {
    expect(compareTokens([1, 2, 3], [1, 1, 1], [1, 2, 3], EPS)).toEqual({
      status: "equal",
      compared: 3,
    });
    expect(compareTokens([], [], [], EPS)).toEqual({ status: "equal", compared: 0 });
  });

  it("a difference below epsilon is a tie and stops the comparison", () => {
    expect(compareTokens([1, 2, 3, 4], [1, 5e-5, 1, 1], [1, 7, 9, 9], EPS)).toEqual({
      status: "tie",
      index: 1,
      expected: 2,
      got: 7,
      margin: 5e-5,
      compared: 1,
    });
  });

  it("a difference at or above epsilon diverges", () => {
    expect(compareTokens([1, 2, 3], [1, 1, 0.5], [1, 2, 4], EPS)).toEqual({
      status: "diverged",
      index: 2,
      expected: 3,
      got: 4,
      margin: 0.5,
      compared: 2,
    });
    expect(compareTokens([5], [EPS], [6], EPS).status).toBe("diverged");
    expect(compareTokens([5], [NaN], [6], EPS).status).toBe("diverged");
  });

  it("a length mismatch diverges at the shorter length", () => {
    expect(compareTokens([1, 2, 3], [1, 1, 1], [1, 2], EPS)).toEqual({
      status: "diverged",
      index: 2,
      expected: 3,
      got: undefined,
      compared: 2,
    });
    expect(compareTokens([1], [1], [1, 8], EPS)).toEqual({
      status: "diverged",
      index: 1,
      expected: undefined,
      got: 8,
      compared: 1,
    });
    // an earlier difference wins over the length mismatch
    expect(compareTokens([1, 2, 3], [0, 0, 0], [9], EPS).status).toBe("tie");
  });

  it("rejects bad arguments", () => {
    expect(() => compareTokens([1, 2], [1], [1, 2], EPS)).toThrow(RangeError);
    expect(() => compareTokens([1], [1], [1], -1)).toThrow(RangeError);
    expect(() => compareTokens([1], [1], [1], NaN)).toThrow(RangeError);
  });

  const token = fc.integer({ min: 0, max: 31 });
  const margin = fc.double({ min: 0, max: 1e-3, noNaN: true });
  const epsilon = fc.constantFrom(0, 1e-9, 1e-4, 1e-3);
  const case_ = fc
    .array(fc.tuple(token, margin), { maxLength: 40 })
    .map((rows) => ({ expected: rows.map((r) => r[0]), margins: rows.map((r) => r[1]) }));

  test.prop([case_, epsilon])("a sequence compared with itself is equal", ({ expected, margins }, eps) => {
    expect(compareTokens(expected, margins, [...expected], eps)).toEqual({
      status: "equal",
      compared: expected.length,
    });
  });

  test.prop([case_.filter((c) => c.expected.length > 0), fc.nat(), fc.integer({ min: 1, max: 31 }), epsilon])(
    "perturbing token i gives tie iff margins[i] < epsilon, at index i",
    ({ expected, margins }, at, shift, eps) => {
      const i = at % expected.length;
      const got = [...expected];
      got[i] = (expected[i] + shift) % 32;
      const result = compareTokens(expected, margins, got, eps);
      expect(result.status).toBe(margins[i] < eps ? "tie" : "diverged");
      expect(result.index).toBe(i);
      expect(result.compared).toBe(i);
      expect(result.expected).toBe(expected[i]);
      expect(result.got).toBe(got[i]);
      expect(result.margin).toBe(margins[i]);
    },
  );
});

describe("topMargin", () => {
  it("finds argmax and top1 - top2 within the row", () => {
    const logits = new Float32Array([9, 9, 1, 3, 2, 0, 9]);
    expect(topMargin(logits, 2, 4)).toEqual({ argmax: 1, margin: 1 });
  });

  it("breaks ties toward the lower index with margin 0", () => {
    expect(topMargin([0, 5, 2, 5, 5], 0, 5)).toEqual({ argmax: 1, margin: 0 });
    expect(topMargin([-Infinity, -Infinity], 0, 2)).toEqual({ argmax: 0, margin: 0 });
  });

  it("handles a single logit and rejects bad rows", () => {
    expect(topMargin([3], 0, 1)).toEqual({ argmax: 0, margin: Infinity });
    expect(() => topMargin([1, 2], 1, 2)).toThrow(RangeError);
    expect(() => topMargin([1, 2], 0, 0)).toThrow(RangeError);
    expect(() => topMargin([1, NaN], 0, 2)).toThrow(RangeError);
  });

  test.prop([fc.array(fc.integer({ min: -8, max: 8 }), { minLength: 1, maxLength: 20 })])(
    "agrees with a sort-based oracle",
    (row) => {
      const max = Math.max(...row);
      const sorted = [...row].sort((a, b) => b - a);
      const { argmax, margin } = topMargin(row, 0, row.length);
      expect(argmax).toBe(row.indexOf(max));
      expect(margin).toBe(row.length === 1 ? Infinity : sorted[0] - sorted[1]);
    },
  );
});

describe("compareTokenAgainstLogits", () => {
  const row = [0, 1, 4, 4 - 5e-5, 2];

  it("equal when got is the argmax, with the top margin", () => {
    expect(compareTokenAgainstLogits(row, 0, 5, 2, EPS)).toEqual({
      status: "equal",
      argmax: 2,
      margin: 4 - (4 - 5e-5),
    });
  });

  it("uses the gap between the reference and the engine choice", () => {
    const tie = compareTokenAgainstLogits(row, 0, 5, 3, EPS);
    expect(tie.status).toBe("tie");
    expect(tie.argmax).toBe(2);
    expect(tie.margin).toBeCloseTo(5e-5, 12);
    expect(compareTokenAgainstLogits(row, 0, 5, 4, EPS)).toEqual({
      status: "diverged",
      argmax: 2,
      margin: 2,
    });
    expect(compareTokenAgainstLogits([1, 1], 0, 2, 1, EPS)).toEqual({ status: "tie", argmax: 0, margin: 0 });
    expect(compareTokenAgainstLogits([1, 1], 0, 2, 1, 0).status).toBe("diverged");
  });

  it("an out-of-vocabulary token diverges", () => {
    expect(compareTokenAgainstLogits(row, 0, 5, 5, EPS)).toEqual({
      status: "diverged",
      argmax: 2,
      margin: Infinity,
    });
  });
});
