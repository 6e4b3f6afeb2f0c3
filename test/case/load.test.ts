import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fc, test } from "@fast-check/vitest";
import type { Case } from "../../src/case/case.ts";
import { loadCaseFile, parseCase, validateCase } from "../../src/case/load.ts";
import { writeJsonAtomic } from "../../src/schema/atomic-write.ts";
import { InputError } from "../../src/schema/input-error.ts";
import { formatIssue } from "../../src/schema/validator.ts";

const VALID: Case = {
  formatVersion: 1,
  model: { preset: "tiny" },
  draft: { kind: "mirror", noiseAlpha: 0.2, tapDelta: 0.01, truncatedLayers: 1, seed: 1 },
  engine: {
    mode: "speculative",
    numSteps: 3,
    topk: 1,
    numDraftTokens: 4,
    chunkSize: null,
    pageSize: 1,
    tokenBudget: 256,
    poolSlots: 4096,
    faults: [],
    runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
  },
  workload: { requests: [{ id: 0, prompt: [1, 5, 9], maxNewTokens: 8, arrivalStep: 0 }], aborts: [] },
};

const dir = mkdtempSync(join(tmpdir(), "specconf-case-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A copy of the valid case with `edit` applied (the edit may make it invalid). */
function edited(edit: (c: any) => void): unknown {
  const c = structuredClone(VALID) as any;
  edit(c);
  return c;
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

function loadError(name: string, value: unknown): InputError {
  const file = join(dir, name);
  writeJsonAtomic(file, value);
  const err = inputError(() => loadCaseFile(file));
  expect(err.file).toBe(file);
  expect(err.message.startsWith(`${file}: `)).toBe(true);
  expect(err.message).not.toContain("\n");
  return err;
}

describe("loadCaseFile", () => {
  it("a valid case round-trips through writeJsonAtomic", () => {
    const file = join(dir, "nested", "deeper", "valid.json");
    writeJsonAtomic(file, VALID);
    expect(loadCaseFile(file)).toEqual(VALID);
    const text = readFileSync(file, "utf8");
    expect(text).toBe(`${JSON.stringify(VALID, null, 2)}\n`);
    // No temp files are left beside the target.
    expect(readdirSync(join(dir, "nested", "deeper"))).toEqual(["valid.json"]);
    // Overwriting replaces the content.
    writeJsonAtomic(file, {
      ...VALID,
      workload: { ...VALID.workload, aborts: [{ request: 0, step: 1, beforeForward: 0 }] },
    });
    expect(loadCaseFile(file).workload.aborts).toHaveLength(1);
  });

  it("a missing file names the file", () => {
    const file = join(dir, "does-not-exist.json");
    const err = inputError(() => loadCaseFile(file));
    expect(err.file).toBe(file);
    expect(err.path).toBeUndefined();
    expect(err.message).toBe(`${file}: file not found`);
  });

  it("malformed JSON names the file, line and column", () => {
    const file = join(dir, "malformed.json");
    writeFileSync(file, '{\n  "formatVersion": 1,\n  "model": }\n');
    const err = inputError(() => loadCaseFile(file));
    expect(err.message).toMatch(new RegExp(`^${escape(file)}: invalid JSON at line 3 column 12: `));

    writeFileSync(file, '{\n  "formatVersion": 1,\n}');
    expect(inputError(() => loadCaseFile(file)).message).toMatch(/invalid JSON at line 3 column 1: /);

    writeFileSync(file, '{"formatVersion": 1');
    expect(inputError(() => loadCaseFile(file)).message).toMatch(/invalid JSON at line 1 column 20: /);
  });

  it("a wrong formatVersion is reported before any schema issue", () => {
    const err = loadError(
      "v2.json",
      edited((c) => {
        c.formatVersion = 2;
        c.engine.numSteps = 0; // would be a schema issue too
      }),
    );
    expect(err.path).toBe("/formatVersion");
    expect(err.message).toBe(`${err.file}: /formatVersion: unsupported case format version 2 (this specconf reads 1)`);
  });

  it.each([
    ["/engine/numSteps", "must be >= 1", (c: any) => (c.engine.numSteps = 0)],
    ["/engine/numSteps", "must be integer", (c: any) => (c.engine.numSteps = "x")],
    ["/workload/requests/0/prompt/1", "must be >= 0", (c: any) => (c.workload.requests[0].prompt[1] = -1)],
    ["/engine/chunkSize", "must be integer or null", (c: any) => (c.engine.chunkSize = "x")],
    ["/engine/chunkSize", "must be >= 1", (c: any) => (c.engine.chunkSize = 0)],
    ["/draft/kind", 'must be one of "mirror"', (c: any) => (c.draft.kind = "bogus")],
    ["/engine/runtime/ep", 'must be one of "cpu", "cuda", "webgpu"', (c: any) => (c.engine.runtime.ep = "tpu")],
    ["/engine/topk", "is required", (c: any) => delete c.engine.topk],
    ["/model/spec/vocab", "is required", (c: any) => (c.model = { spec: { name: "x" } })],
  ])("a wrong field deep inside names its path %s", (path, message, edit) => {
    const err = loadError("wrong.json", edited(edit));
    expect(err.path).toBe(path);
    expect(err.message.startsWith(`${err.file}: ${path}: ${message}`)).toBe(true);
  });

  it.each([
    ["/engine/extra", (c: any) => (c.engine.extra = 1)],
    ["/workload/requests/0/priority", (c: any) => (c.workload.requests[0].priority = 1)],
    ["/model/size", (c: any) => (c.model.size = "small")],
    ["/surprise", (c: any) => (c.surprise = true)],
  ])("an unknown property is named: %s", (path, edit) => {
    const err = loadError("extra.json", edited(edit));
    expect(err.path).toBe(path);
    expect(err.message).toBe(`${err.file}: ${path}: is not an allowed property`);
  });

  it("collects every issue, the message names the first", () => {
    const issues = validateCase(
      edited((c) => {
        c.engine.numSteps = 0;
        c.workload.requests[0].maxNewTokens = 0;
      }),
    );
    expect(issues).toEqual([
      { path: "/engine/numSteps", message: "must be >= 1" },
      { path: "/workload/requests/0/maxNewTokens", message: "must be >= 1" },
    ]);
    expect(formatIssue("case.json", issues[0])).toBe("case.json: /engine/numSteps must be >= 1");
    expect(validateCase(VALID)).toEqual([]);
  });
});

describe("parseCase", () => {
  it("parses a valid case", () => {
    expect(parseCase(JSON.stringify(VALID), "mem")).toEqual(VALID);
  });

  it("a document that is not an object", () => {
    expect(inputError(() => parseCase("[]", "mem")).message).toBe("mem: /: must be object");
  });

  test.prop([fc.json()])("random JSON that is not a case is always an InputError naming the label", (text) => {
    let threw: unknown;
    try {
      parseCase(text, "random.json");
    } catch (err) {
      threw = err;
    }
    // fc.json() essentially never produces a valid case; if it did, it must pass the schema.
    if (threw === undefined) {
      expect(validateCase(JSON.parse(text))).toEqual([]);
      return;
    }
    expect(threw).toBeInstanceOf(InputError);
    expect((threw as InputError).message.startsWith("random.json: ")).toBe(true);
    expect((threw as InputError).message).not.toContain("\n");
  });

  test.prop([fc.string()])("arbitrary text is an InputError, never another error", (text) => {
    fc.pre(text.trim() !== "");
    expect(() => parseCase(text, "text.json")).toThrow(InputError);
  });

  test.prop([
    fc.constantFrom<(c: any, v: unknown) => void>(
      (c, v) => (c.engine.numSteps = v),
      (c, v) => (c.workload.requests[0].prompt[0] = v),
      (c, v) => (c.draft.noiseAlpha = v),
      (c, v) => (c.engine.runtime.threads = v),
    ),
    fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.integer({ max: -1 }), fc.array(fc.nat())),
  ])("a corrupted field of a valid case is an InputError with a path", (edit, v) => {
    const err = inputError(() => parseCase(JSON.stringify(edited((c) => edit(c, v))), "case.json"));
    expect(err.path).toMatch(/^\/(engine|workload|draft)\//);
    expect(err.message.startsWith(`case.json: ${err.path}: `)).toBe(true);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
