import { describe, expect, it } from "vitest";
import { fc, test } from "@fast-check/vitest";
import { parseTrace, validateTrace } from "../../src/trace/load.ts";
import { InputError } from "../../src/schema/input-error.ts";

const MINIMAL = {
  formatVersion: 1,
  engine: { name: "third-party" },
  events: [{ index: 0, phase: "prefill", rows: [{ request: 0, token: 5, position: 0 }] }],
};

function withEvent(edit: (e: any) => void): any {
  const t = structuredClone(MINIMAL) as any;
  edit(t.events[0]);
  return t;
}

function inputError(run: () => unknown): InputError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error("expected an InputError");
}

describe("validateTrace", () => {
  it("a minimal trace validates with no issues", () => {
    expect(validateTrace(MINIMAL)).toEqual([]);
    expect(parseTrace(JSON.stringify(MINIMAL), "t.json")).toEqual(MINIMAL);
  });

  it("optional fields validate, including attended ranges (tuples)", () => {
    const t = withEvent((e) => {
      e.step = 0;
      e.rows[0] = {
        ...e.rows[0],
        slot: 3,
        temporary: false,
        predict: 7,
        margin: 0.5,
        attended: { positions: [[0, 0]], batchRows: [0] },
      };
      e.verify = [{ request: 0, acceptIndex: [0, -1], acceptLen: 1, bonus: 7 }];
    });
    t.engine.custom = "engines may add their own fields";
    t.requests = [{ id: 0, prompt: [5], output: [7], finishReason: "length" }];
    expect(validateTrace(t)).toEqual([]);
  });

  it("an unknown phase is rejected with the path of the phase", () => {
    const issues = validateTrace(withEvent((e) => (e.phase = "draft-verify")));
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toBe("/events/0/phase");
    expect(issues[0].message).toMatch(/^must be one of "prefill", "decode", "verify"/);
    const err = inputError(() =>
      parseTrace(JSON.stringify(withEvent((e) => (e.phase = "draft-verify"))), "trace.json"),
    );
    expect(err.message).toMatch(/^trace\.json: \/events\/0\/phase: must be one of/);
  });

  it("rows and tuples name deep paths", () => {
    expect(validateTrace(withEvent((e) => (e.rows[0].position = 1.5)))).toEqual([
      { path: "/events/0/rows/0/position", message: "must be integer" },
    ]);
    expect(validateTrace(withEvent((e) => (e.rows[0].attended = { positions: [[0, 1, 2]] })))).toEqual([
      { path: "/events/0/rows/0/attended/positions/0", message: "must NOT have more than 2 items" },
    ]);
    expect(validateTrace(withEvent((e) => delete e.rows[0].token))).toEqual([
      { path: "/events/0/rows/0/token", message: "is required" },
    ]);
  });

  it("formatVersion is checked first", () => {
    expect(validateTrace({ ...MINIMAL, formatVersion: 7, events: "nope" })).toEqual([
      { path: "/formatVersion", message: "unsupported trace format version 7 (this specconf reads 1)" },
    ]);
    const err = inputError(() => parseTrace(JSON.stringify({ ...MINIMAL, formatVersion: 7 }), "trace.json"));
    expect(err.message).toBe("trace.json: /formatVersion: unsupported trace format version 7 (this specconf reads 1)");
  });

  it("malformed JSON is an InputError", () => {
    expect(inputError(() => parseTrace('{"events": [', "trace.json")).message).toMatch(
      /^trace\.json: invalid JSON at line 1 column 13/,
    );
  });

  test.prop([fc.json()])("random JSON is a valid trace or an InputError naming the label", (text) => {
    try {
      parseTrace(text, "random-trace.json");
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).message.startsWith("random-trace.json: ")).toBe(true);
    }
  });
});
