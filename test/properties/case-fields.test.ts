// No blind spot by construction (issue 34, item 7): every field of the case format, walked recursively through
// the TypeBox schemas (src/case/case.ts, the engine config's src/case/engine-config.ts, the sampling options'),
// takes at least two distinct values (absence counts as one, for an optional field) over cases drawn from every
// property's space, the mixed one and the EAGLE-3 oracle's spaces: the cases `specconf check` and the law suites
// run. A field the generators never vary is a dimension no law is ever shown, so an engine that ignores it
// passes every check (as every EAGLE-3 case used the default auxiliary layers until issue 34). A field may stay
// constant only with an entry in EXEMPT saying why no law's verdict depends on varying it. A generated case names
// a preset, whose spec is walked under model.spec (protocol requests and golden files carry it in full), or
// carries a model spec variant (property 'model spec variants': the spec fields every preset holds at one value,
// varied).
import fc from "fast-check";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { CaseSchema, ModelSpecSchema, type Case } from "../../src/case/case.ts";
import { getPreset } from "../../src/model/presets.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { withEagle3Oracle } from "../../src/properties/arbitraries/eagle3-oracle.ts";
import { LAW_PROPERTIES, MIXED } from "../../src/properties/law-properties.ts";

/** Cases drawn per property space: ~50 spaces, so about a thousand cases in all. */
const CASES_PER_SPACE = 20;

/**
 * Fields generated cases hold constant, each with why no law reads a variation of it. An entry for a field that
 * does vary fails too (the list stays exactly the constant fields).
 */
const EXEMPT: Record<string, string> = {
  formatVersion: "the case format's version: one format exists",
  "engine.runtime.ep":
    "the CPU check runs the CPU EP; a GPU EP is chosen per run (--ep), and the GPU EPs' own feed, the context gather, is drawn on the CPU EP (engine.runtime.gatherContext)",
  "engine.runtime.threads":
    "intra-op threads are pinned to 1 so runs repeat bit for bit; no law's verdict depends on the thread count (results do not either: ECOSYSTEM.md, CPU)",
  "engine.runtime.graphOptimizationLevel":
    "pinned (recorded in traces and golden files); it changes ONNX Runtime's kernels, not what the engine computes",
  "engine.faults": "faults are switched on by `specconf mutants`, which varies them; a check runs the correct engine",
  "engine.paddingPoisonSeed":
    "padding-poison invariance's twin varies it (the case's own run keeps the default): a law whose twin is the variation",
  "engine.mode":
    "the check runs speculative cases and each one's target-only baseline (lossless and the other 'compare' laws); target-only cases are drawn only for an engine that declares no speculation (narrowSpace)",
  "draft.seed":
    "the draft's weight seed, fixed so each draft graph is built once per process (arbitraries/model.ts); laws read the draft through its graphs, whichever weights",
  "draft.noiseAlpha":
    "noisy-mirror's perturbation size: the law that reads it, mirror acceptance, exempts the noisy mirror; partial acceptance is the kind's point, its size is not",
  "draft.tapDelta": "the tap's weight, small enough to keep the argmax at any value the format accepts (graphs.ts)",
  "draft.truncatedLayers":
    "truncated-mirror keeps the target's first layer: the presets have 2 or 3 layers and laws read the draft through its graph",
  "draft.draftVocab":
    "EAGLE-3 heads draft over half the target vocabulary by default (t2d/d2t then non-trivial, which draft vocabulary reads); the size itself is read by no law",
  "model.spec.logitStd": "a weight-scale target of the generator (healthy margins), read by no law",
  draft:
    "a null draft is a target-only case, drawn only for an engine that declares no speculation (narrowSpace); every speculative case has a draft, and its target-only baseline runs without one",
  "engine.faults[]": "faults are switched on by `specconf mutants`, which varies them; a check runs the correct engine",
  "model.spec.maxPositions":
    "the model's position bound, 256 in every property preset; the context boundary the laws read is the engine's, engine.contextLength and engine.draftContextLength, which the context-limit space varies",
  "model.spec.residualScale.fromLayer": "the truncated mirror's preset knob (one preset scales): read by no law",
  "model.spec.residualScale.factor": "the truncated mirror's preset knob (one preset scales): read by no law",
  "model.spec.ropeScaling.betaFast": "YaRN's beta_fast at its default (absent) in the YaRN preset",
  "model.spec.ropeScaling.betaSlow": "YaRN's beta_slow at its default (absent) in the YaRN preset",
};

type Values = Map<string, Set<string>>;

const ABSENT = "<absent>";

function record(values: Values, path: string, value: string): void {
  let set = values.get(path);
  if (!set) values.set(path, (set = new Set()));
  set.add(value);
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

function isContainer(schema: TSchema): boolean {
  return (
    schema.type === "object" ||
    schema.type === "array" ||
    (schema.anyOf as TSchema[] | undefined)?.some(isContainer) === true
  );
}

/** Every path of the schema: objects by key, arrays as `[]`, records as `*`, unions' variants at the same path. */
function schemaPaths(schema: TSchema, path: string, paths: Set<string>): void {
  if (schema.anyOf && (schema.anyOf as TSchema[]).some(isContainer)) {
    // The path itself: which variant (the draft or null, a preset or a spec).
    paths.add(path);
    for (const variant of (schema.anyOf as TSchema[]).filter(isContainer)) schemaPaths(variant, path, paths);
    return;
  }
  if (schema.type === "object" && schema.properties) {
    for (const [key, child] of Object.entries(schema.properties as Record<string, TSchema>))
      schemaPaths(child, join(path, key), paths);
    return;
  }
  if (schema.type === "object" && schema.patternProperties) {
    paths.add(join(path, "*"));
    for (const child of Object.values(schema.patternProperties as Record<string, TSchema>))
      schemaPaths(child, join(path, "*"), paths);
    return;
  }
  paths.add(path);
  if (schema.type === "array") schemaPaths(schema.items as TSchema, `${path}[]`, paths);
}

/** Records each path's value (a leaf's or a whole array's JSON; absent optional keys as ABSENT). */
function walk(schema: TSchema, value: unknown, path: string, values: Values): void {
  if (schema.anyOf && (schema.anyOf as TSchema[]).some(isContainer)) {
    const variants = schema.anyOf as TSchema[];
    const index = variants.findIndex((candidate) => Value.Check(candidate, value));
    if (index < 0) throw new Error(`${path}: ${JSON.stringify(value)} matches no variant of the schema`);
    record(values, path, `variant ${index}`);
    if (isContainer(variants[index])) walk(variants[index], value, path, values);
    return;
  }
  if (schema.type === "object" && schema.properties) {
    const object = value as Record<string, unknown>;
    for (const [key, child] of Object.entries(schema.properties as Record<string, TSchema>)) {
      if (object[key] === undefined) record(values, join(path, key), ABSENT);
      else walk(child, object[key], join(path, key), values);
    }
    return;
  }
  if (schema.type === "object" && schema.patternProperties) {
    const child = Object.values(schema.patternProperties as Record<string, TSchema>)[0];
    record(values, join(path, "*"), JSON.stringify(Object.keys(value as object)));
    for (const item of Object.values(value as object)) walk(child, item, join(path, "*"), values);
    return;
  }
  record(values, path, JSON.stringify(value));
  if (schema.type === "array")
    for (const item of value as unknown[]) walk(schema.items as TSchema, item, `${path}[]`, values);
}

/** The case as walked: a preset carries its spec too (the preset's name stays under model.preset). */
function walkCase(testCase: Case, values: Values): void {
  walk(CaseSchema, testCase, "", values);
  if ("preset" in testCase.model) walk(ModelSpecSchema, getPreset(testCase.model.preset), "model.spec", values);
}

function drawnValues(): Values {
  const values: Values = new Map();
  for (const property of [MIXED, ...LAW_PROPERTIES]) {
    const cases = fc.sample(caseArbitrary({ ...property.space, faults: [] }), { seed: 34, numRuns: CASES_PER_SPACE });
    for (const testCase of cases) walkCase(testCase, values);
  }
  // check --eagle3-oracle's spaces (off by default, so the default spaces and the kills draw as they did): the
  // oracle head (draft.oracle) and its bigram target (model.spec.bigram) are varied there.
  for (const property of LAW_PROPERTIES.filter((entry) =>
    entry.space.drafts.some((kind) => kind.startsWith("eagle3")),
  )) {
    const space = withEagle3Oracle({ ...property.space, faults: [] });
    for (const testCase of fc.sample(caseArbitrary(space), { seed: 34, numRuns: CASES_PER_SPACE }))
      walkCase(testCase, values);
  }
  return values;
}

describe("generated cases vary every field of the case format", () => {
  const values = drawnValues();
  const paths = new Set<string>();
  schemaPaths(CaseSchema, "", paths);

  it("walks the schema: the draft's aux layers, the engine config and the sampling options are among its paths", () => {
    for (const path of ["draft.auxLayers", "draft.auxLayers[]", "engine.runtime.gatherContext", "engine.numSteps"])
      expect([...paths]).toContain(path);
    expect([...paths].filter((path) => path.startsWith("workload.requests[].sampling.")).length).toBeGreaterThan(10);
  });

  it("every path takes two or more values, or is exempt with a reason", () => {
    const constant = [...paths].filter((path) => (values.get(path)?.size ?? 0) < 2);
    const unexplained = constant
      .filter((path) => !(path in EXEMPT))
      .map((path) => `${path}: ${[...(values.get(path) ?? ["never present"])].join(", ")}`);
    expect(
      unexplained,
      "fields generated cases never vary (vary them in src/properties/arbitraries/, or exempt them here with why no law reads them)",
    ).toEqual([]);
    const varied = Object.keys(EXEMPT).filter((path) => !constant.includes(path));
    expect(varied, "exempt fields that do vary (or are no path of the schema): drop them from EXEMPT").toEqual([]);
  });

  it("the spec fields every preset holds at one value vary (model spec variants), each over several values", () => {
    for (const path of [
      "model.spec.rmsEps",
      "model.spec.ropeTheta",
      "model.spec.bosId",
      "model.spec.eosId",
      "model.spec.recurrent.convKernel",
      "model.spec.ropeScaling.originalMaxPositions",
    ])
      expect([...(values.get(path) ?? [])].filter((value) => value !== ABSENT).length, path).toBeGreaterThanOrEqual(2);
  });

  it("EAGLE-3 cases draw the checkpoint's layer ids: counts 1 to 4, a non-ascending order among them, the default too", () => {
    const lists = [...(values.get("draft.auxLayers") ?? [])]
      .filter((value) => value !== ABSENT)
      .map((value) => JSON.parse(value) as number[]);
    expect(new Set(lists.map((list) => list.length))).toEqual(new Set([1, 2, 3, 4]));
    expect(lists.some((list) => list.some((id, i) => i > 0 && id < list[i - 1]))).toBe(true);
    expect(values.get("draft.auxLayers")).toContain(ABSENT);
  });
});
