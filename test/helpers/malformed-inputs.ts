// Generators of malformed input for every command (fast-check arbitraries), grouped by category: bad flags,
// malformed or invalid case files, impossible configs, resource bombs, flags that would be ignored, bad
// output paths, golden files, outputs lines, traces, failure records and their siblings, missing files.
// Each input says what stderr must name (flags, files) and, for a place inside a JSON document, the JSON
// pointer the error must name (that pointer, an ancestor of it or a descendant). test/cli/malformed-input
// runs them through the commands' entry points and checks the contract: exit 2, one line naming the place,
// no stack trace, nothing written.
import fc from "fast-check";
import { availableParallelism } from "node:os";
import { FAULT_NAMES } from "../../src/case/faults.ts";
import { RECORD_LAWS } from "../../src/failures/failure-file.ts";
import { LAW_NAMES } from "../../src/laws/registry.ts";
import { PRESETS, presetNames } from "../../src/model/presets.ts";
import { MODEL_DRAFT_KINDS } from "../../src/model/spec.ts";
import { EXECUTION_PROVIDERS } from "../../src/runtime/ort.ts";
import { profileNames } from "../../src/profiles/profiles.ts";
import { suiteNames } from "../../src/golden/suites.ts";

export type FileContent = string | { json: unknown } | { dir: true } | { fifo: true };

export interface Malformed {
  /** Arguments after the command name; "$D" is the input's own folder. */
  argv: string[];
  files?: Record<string, FileContent>;
  /** What stderr must contain ("$D" replaced). */
  names: string[];
  /** The JSON pointer the error must name, after names[0] (that pointer, an ancestor or a descendant). */
  pointer?: string;
}

export interface Materials {
  /** A valid case (tiny preset, mirror draft, one request). */
  validCase: Record<string, unknown>;
  /** golden/tiny-mirror.json, parsed. */
  golden: Record<string, unknown>;
  /** The reference engine's outputs lines and trace for its case 'unchunked'. */
  lines: Record<string, unknown>[];
  trace: Record<string, unknown>;
  /** A schema-valid failure record around validCase, its siblings named r.case.json and r.trace.json. */
  record: Record<string, unknown>;
}

export const GOLDEN = "golden/tiny-mirror.json";
const INT32 = 2 ** 31 - 1;
const VOCAB = 64;
const CORES = availableParallelism();

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

function clone<T>(value: T): T {
  return structuredClone(value);
}

function setAt(root: Json, pointer: string, value: unknown): void {
  const keys = pointer.split("/").slice(1);
  let node = root;
  for (const key of keys.slice(0, -1)) node = node[key];
  node[keys[keys.length - 1]] = value;
}

function getAt(root: Json, pointer: string): unknown {
  return pointer
    .split("/")
    .slice(1)
    .reduce((node, key) => (node as Json)?.[key], root);
}

/** A value of another JSON type than `current` (never null where the schema allows null). */
function wrongType(current: unknown, allowsNull = false): fc.Arbitrary<unknown> {
  const candidates: unknown[] = ["x", 1.5, true, [], {}, ...(allowsNull ? [] : [null])];
  const kind = (value: unknown) => (Array.isArray(value) ? "array" : value === null ? "null" : typeof value);
  const integer = typeof current === "number" && Number.isInteger(current);
  return fc.constantFrom(...candidates.filter((value) => kind(value) !== kind(current) || (integer && value === 1.5)));
}

// ---------------------------------------------------------------- flags

interface FlagTable {
  integers: Record<string, number | undefined>;
  choices: Record<string, readonly string[]>;
  strings: readonly string[];
  booleans: readonly string[];
  positionals: boolean;
}

const LIMIT_INTEGERS = { "max-requests": 1, "max-total-tokens": 1, "max-parameters": 1 };

export const FLAG_TABLES: Record<string, FlagTable> = {
  run: {
    integers: {
      steps: 1,
      topk: 1,
      "draft-tokens": 2,
      "retract-every": 2,
      page: 1,
      budget: 1,
      requests: 1,
      "max-new-tokens": 1,
      threads: 1,
      seed: undefined,
      ...LIMIT_INTEGERS,
    },
    choices: { preset: presetNames(), draft: MODEL_DRAFT_KINDS, ep: EXECUTION_PROVIDERS, fault: FAULT_NAMES },
    strings: ["case", "chunk", "trace"],
    booleans: ["multi-layer", "replay", "json"],
    positionals: false,
  },
  check: {
    integers: { runs: 1, seed: undefined, "shrink-seconds": 0, "engine-timeout": 1 },
    choices: { fault: FAULT_NAMES, ep: EXECUTION_PROVIDERS, twins: ["combined", "separate"], profile: profileNames() },
    strings: ["law", "junit", "failures", "engine", "golden-file", "outputs", "pins"],
    booleans: ["json", "no-write", "golden"],
    positionals: false,
  },
  replay: {
    integers: { from: 0, to: 0, "engine-timeout": 1, ...LIMIT_INTEGERS },
    choices: {},
    strings: ["engine"],
    booleans: ["json"],
    positionals: true,
  },
  mutants: {
    integers: { "max-runs": 1, batch: 1, seed: undefined, "shrink-seconds": 0 },
    choices: { fault: FAULT_NAMES },
    strings: ["failures"],
    booleans: ["update-kills", "json"],
    positionals: false,
  },
  validate: {
    integers: {},
    choices: { profile: profileNames() },
    strings: ["golden", "outputs", "trace", "case", "epsilon", "report"],
    booleans: ["json"],
    positionals: false,
  },
  export: {
    integers: {},
    choices: { format: ["onnx", "hf"] },
    strings: ["out", "golden"],
    booleans: [],
    positionals: false,
  },
  adapter: { integers: {}, choices: { fault: FAULT_NAMES }, strings: [], booleans: [], positionals: false },
  engine: {
    integers: { threads: 1 },
    choices: {},
    strings: ["models"],
    booleans: ["write-missing", "log-rounds"],
    positionals: true,
  },
  "golden update": {
    integers: {},
    choices: { suite: suiteNames() },
    strings: ["dir"],
    booleans: [],
    positionals: false,
  },
  "golden verify": { integers: {}, choices: {}, strings: ["dir"], booleans: ["json"], positionals: true },
  "golden dump": {
    integers: {},
    choices: { fault: FAULT_NAMES },
    strings: ["golden", "outputs", "trace-dir"],
    booleans: [],
    positionals: false,
  },
};

const notAnInteger = fc.oneof(
  fc.constantFrom("1e3", "0x10", "1.5", "", " ", "--1", "one", "3 4", "+-3", "NaN", "Infinity"),
  fc.string({ maxLength: 12 }).filter((text) => !/^[+-]?\d+$/.test(text.trim())),
);

/** Malformed flags for a command whose flags are `table` (argv prefixed with `prefix`, e.g. ["update"]). */
export function badFlags(table: FlagTable, prefix: string[] = []): fc.Arbitrary<Malformed> {
  const known = [
    ...Object.keys(table.integers),
    ...Object.keys(table.choices),
    ...table.strings,
    ...table.booleans,
    "help",
  ];
  const options: fc.Arbitrary<Malformed>[] = [
    fc
      .stringMatching(/^[a-z][a-z0-9-]{0,14}$/)
      .filter((name) => !known.includes(name))
      .map((name) => ({ argv: [...prefix, `--${name}`], names: [`--${name}`] })),
  ];
  const integers = Object.entries(table.integers);
  if (integers.length > 0) {
    options.push(
      fc
        .tuple(fc.constantFrom(...integers), notAnInteger)
        .map(([[name], value]) => ({ argv: [...prefix, `--${name}=${value}`], names: [`--${name}`] })),
    );
    const bounded = integers.filter(([, min]) => min !== undefined) as [string, number][];
    if (bounded.length > 0)
      options.push(
        fc
          .tuple(
            fc.constantFrom(...bounded),
            fc.oneof(fc.integer({ min: -1e15, max: 0 }), fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n })),
          )
          .filter(([[, min], value]) => Number(value) < min || typeof value === "bigint")
          .map(([[name], value]) => ({ argv: [...prefix, `--${name}`, String(value)], names: [`--${name}`] })),
      );
  }
  const choices = Object.entries(table.choices);
  if (choices.length > 0)
    options.push(
      fc
        .tuple(fc.constantFrom(...choices), fc.string({ maxLength: 16 }))
        .filter(([[, allowed], value]) => !allowed.includes(value))
        .map(([[name], value]) => ({ argv: [...prefix, `--${name}=${value}`], names: [`--${name}`] })),
    );
  const valued = [...Object.keys(table.integers), ...Object.keys(table.choices), ...table.strings];
  if (valued.length > 0)
    options.push(fc.constantFrom(...valued).map((name) => ({ argv: [...prefix, `--${name}`], names: [`--${name}`] })));
  if (table.booleans.length > 0)
    options.push(
      fc
        .tuple(fc.constantFrom(...table.booleans), fc.stringMatching(/^[a-z0-9]{0,5}$/))
        .map(([name, value]) => ({ argv: [...prefix, `--${name}=${value}`], names: [`--${name}`] })),
    );
  if (!table.positionals)
    options.push(
      fc
        .stringMatching(/^[a-z0-9][a-z0-9._]{0,10}$/)
        .map((word) => ({ argv: [...prefix, word], names: [`'${word}'`] })),
    );
  return fc.oneof(...options);
}

// ---------------------------------------------------------------- output paths

/** Bad paths for an output `flag` of kind file or folder; `argv` builds the rest of a valid invocation. */
export function badOutputPath(
  flag: string,
  kind: "file" | "folder",
  argv: (path: string) => string[],
  files: Record<string, FileContent> = {},
): fc.Arbitrary<Malformed> {
  const name = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
  const cases: fc.Arbitrary<{ path: string; files?: Record<string, FileContent> }>[] =
    kind === "file"
      ? [
          name.map((n) => ({ path: `$D/${n}`, files: { [n]: { dir: true } } })),
          name.map((n) => ({ path: `$D/${n}/` })),
          name.map((n) => ({ path: `$D/missing-${n}/out.json` })),
          name.map((n) => ({ path: `$D/${n}/out.json`, files: { [n]: "a file" } })),
          name.map((n) => ({ path: `$D/${n}`, files: { [n]: { fifo: true } } })),
          name.map((n) => ({ path: `/sys/specconf-${n}.json` })),
          fc.constant({ path: "" }),
        ]
      : [
          name.map((n) => ({ path: `$D/${n}`, files: { [n]: "a file" } })),
          name.map((n) => ({ path: `$D/${n}/below`, files: { [n]: "a file" } })),
          name.map((n) => ({ path: `$D/${n}`, files: { [n]: { fifo: true } } })),
          name.map((n) => ({ path: `/sys/specconf-${n}` })),
          fc.constant({ path: "" }),
        ];
  return fc.oneof(...cases).map((bad) => ({
    argv: argv(bad.path),
    files: { ...files, ...bad.files },
    names: [flag],
  }));
}

// ---------------------------------------------------------------- documents

/** A JSON text that does not parse: a proper prefix of a valid document, or garbage. */
export function brokenJson(valid: unknown): fc.Arbitrary<string> {
  const text = JSON.stringify(valid);
  return fc.oneof(
    fc.integer({ min: 0, max: text.length - 1 }).map((cut) => text.slice(0, cut)),
    fc.constantFrom("{", "[1,", "{,}", "nul", '{"a":1}}', "\u0000", "{'a': 1}"),
  );
}

/** Changes at `paths` (of `valid`) to values of the wrong type; pointer: the path. */
function wrongTypes(valid: Json, paths: readonly (string | [string, "null ok"])[]): fc.Arbitrary<[Json, string]> {
  return fc.constantFrom(...paths).chain((entry) => {
    const [path, nullOk] = typeof entry === "string" ? [entry, false] : [entry[0], true];
    return wrongType(getAt(valid, path), nullOk).map((value): [Json, string] => {
      const doc = clone(valid);
      setAt(doc, path, value);
      return [doc, path];
    });
  });
}

// ---------------------------------------------------------------- cases

type CaseEdit = [edit: (c: Json) => void, pointer: string];

const CASE_TYPE_PATHS: (string | [string, "null ok"])[] = [
  "/formatVersion",
  "/model",
  "/draft/kind",
  "/draft/noiseAlpha",
  "/draft/truncatedLayers",
  "/draft/seed",
  ["/draft", "null ok"],
  "/engine/mode",
  "/engine/numSteps",
  "/engine/topk",
  "/engine/numDraftTokens",
  ["/engine/chunkSize", "null ok"],
  "/engine/pageSize",
  "/engine/tokenBudget",
  "/engine/poolSlots",
  "/engine/faults",
  "/engine/runtime",
  "/engine/runtime/ep",
  "/engine/runtime/threads",
  "/workload",
  "/workload/requests",
  "/workload/requests/0",
  "/workload/requests/0/id",
  "/workload/requests/0/prompt",
  "/workload/requests/0/prompt/0",
  "/workload/requests/0/maxNewTokens",
  "/workload/requests/0/arrivalStep",
  "/workload/aborts",
];

const tinySpec = { ...PRESETS.tiny, name: "custom", preamble: [...PRESETS.tiny.preamble] };

/** Configs that parse but no engine can run, each with the JSON path it must be reported at. */
export const impossibleConfig: fc.Arbitrary<CaseEdit> = fc.oneof(
  fc
    .integer({ min: 9, max: 1e6 })
    .map((k): CaseEdit => [(c) => Object.assign(c.engine, { topk: k, numDraftTokens: 2 }), "/engine/topk"]),
  fc
    .integer({ min: 65, max: INT32 - 1 })
    .map((s): CaseEdit => [(c) => Object.assign(c.engine, { numSteps: s, numDraftTokens: s + 1 }), "/engine/numSteps"]),
  fc
    .string({ maxLength: 12 })
    .filter((name) => !Object.hasOwn(PRESETS, name))
    .map((name): CaseEdit => [(c) => (c.model = { preset: name }), "/model/preset"]),
  fc.integer({ min: 1, max: 25 }).map((slots): CaseEdit => [(c) => (c.engine.poolSlots = slots), "/engine/poolSlots"]),
  fc
    .integer({ min: 2 ** 24 + 1, max: INT32 })
    .map((slots): CaseEdit => [(c) => (c.engine.poolSlots = slots), "/engine/poolSlots"]),
  fc
    .integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER })
    .map((id): CaseEdit => [(c) => (c.workload.requests[0].id = id), "/workload/requests/0/id"]),
  fc
    .integer({ min: 100_001, max: INT32 })
    .map((step): CaseEdit => [(c) => (c.workload.requests[0].arrivalStep = step), "/workload/requests/0/arrivalStep"]),
  fc
    .integer({ min: 100_001, max: INT32 })
    .map((step): CaseEdit => [
      (c) => (c.workload.aborts = [{ request: 0, step, beforeForward: 0 }]),
      "/workload/aborts/0/step",
    ]),
  fc
    .integer({ min: 100_001, max: INT32 })
    .map((step): CaseEdit => [
      (c) => (c.workload.retracts = [{ request: 0, step, beforeForward: 1 }]),
      "/workload/retracts/0/step",
    ]),
  fc
    .integer({ min: 1, max: 1000 })
    .map((request): CaseEdit => [
      (c) => (c.workload.aborts = [{ request, step: 1, beforeForward: 0 }]),
      "/workload/aborts/0/request",
    ]),
  fc
    .integer({ min: 3, max: INT32 })
    .map((layers): CaseEdit => [
      (c) => Object.assign(c.draft, { kind: "truncated-mirror", truncatedLayers: layers }),
      "/draft/truncatedLayers",
    ]),
  fc
    .tuple(fc.nat({ max: 6 }), fc.integer({ min: VOCAB, max: INT32 }))
    .map(([at, token]): CaseEdit => [
      (c) => (c.workload.requests[0].prompt[at] = token),
      `/workload/requests/0/prompt/${at}`,
    ]),
  fc
    .integer({ min: 250, max: INT32 })
    .map((tokens): CaseEdit => [(c) => (c.workload.requests[0].maxNewTokens = tokens), "/workload/requests/0"]),
  fc
    .integer({ min: 2, max: 100 })
    .filter((n) => n !== 4)
    .map((n): CaseEdit => [(c) => (c.engine.numDraftTokens = n), "/engine/numDraftTokens"]),
  fc
    .integer({ min: 12, max: 1000 })
    .map((n): CaseEdit => [(c) => Object.assign(c.engine, { topk: 2, numDraftTokens: n }), "/engine/numDraftTokens"]),
  fc
    .integer({ min: 4097, max: INT32 })
    .map((page): CaseEdit => [(c) => (c.engine.pageSize = page), "/engine/pageSize"]),
  fc.constant<CaseEdit>([(c) => c.workload.requests.push({ ...c.workload.requests[0] }), "/workload/requests/1/id"]),
  fc.constant<CaseEdit>([(c) => ((c.draft.kind = "eagle"), (c.engine.multiLayer = true)), "/draft/kind"]),
  // EAGLE-3 checkpoint options the target cannot serve, or given to a draft that has none (the tiny target's
  // streams are 0..2: id 2, its layer count, is the last layer's output).
  fc
    .integer({ min: 3, max: INT32 })
    .map((layer): CaseEdit => [
      (c) => Object.assign(c.draft, { kind: "eagle3", auxLayers: [0, layer, 1] }),
      "/draft/auxLayers",
    ]),
  fc
    .integer({ min: VOCAB + 1, max: INT32 })
    .map((size): CaseEdit => [
      (c) => Object.assign(c.draft, { kind: "eagle3", draftVocab: size }),
      "/draft/draftVocab",
    ]),
  fc
    .constantFrom("normBeforeFc", "auxLayers", "draftVocab")
    .map((field): CaseEdit => [
      (c) => Object.assign(c.draft, { [field]: field === "normBeforeFc" ? true : field === "auxLayers" ? [0] : 8 }),
      `/draft/${field}`,
    ]),
  fc.constant<CaseEdit>([(c) => ((c.draft.kind = "eagle3"), (c.engine.multiLayer = true)), "/draft/kind"]),
  fc.constant<CaseEdit>([(c) => (c.draft = null), "/draft"]),
  fc.constant<CaseEdit>([(c) => (c.workload.requests[0].prompt[0] = 2), "/workload/requests/0/prompt/0"]),
  // Model specs no engine should build.
  fc
    .integer({ min: 2 ** 20, max: INT32 })
    .map((hidden): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, hidden } }), "/model/spec"]),
  fc
    .integer({ min: 2 ** 24 + 1, max: INT32 })
    .map((vocab): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, vocab } }), "/model/spec"]),
  fc
    .integer({ min: 2 ** 20 + 1, max: INT32 })
    .map((maxPositions): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, maxPositions } }), "/model/spec"]),
  fc
    .integer({ min: 1025, max: 100_000 })
    .map((layers): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, layers } }), "/model/spec"]),
  fc
    .constantFrom(3, 5, 7)
    .map((kvHeads): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, kvHeads } }), "/model/spec/heads"]),
  fc
    .constantFrom(3, 5, 9)
    .map((headDim): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, headDim } }), "/model/spec/headDim"]),
  fc
    .integer({ min: VOCAB, max: INT32 })
    .map((bosId): CaseEdit => [(c) => (c.model = { spec: { ...tinySpec, bosId } }), "/model/spec/bosId"]),
  fc.constant<CaseEdit>([(c) => (c.model = { spec: { ...tinySpec, preamble: [2, 5] } }), "/model/spec/preamble"]),
  fc
    .integer({ min: 2, max: 100 })
    .map((fromLayer): CaseEdit => [
      (c) => (c.model = { spec: { ...tinySpec, residualScale: { fromLayer, factor: 0.1 } } }),
      "/model/spec/residualScale/fromLayer",
    ]),
);

/** Cases past a resource limit (with the flags they need), each with the path it must be reported at. */
export const resourceBomb: fc.Arbitrary<[CaseEdit, string[]]> = fc.oneof(
  fc
    .integer({ min: 1025, max: 1400 })
    .map((count): [CaseEdit, string[]] => [
      [
        (c) => (c.workload.requests = Array.from({ length: count }, (_, id) => ({ ...c.workload.requests[0], id }))),
        "/workload/requests",
      ],
      [],
    ]),
  fc
    .integer({ min: CORES + 1, max: INT32 })
    .map((threads): [CaseEdit, string[]] => [
      [(c) => (c.engine.runtime.threads = threads), "/engine/runtime/threads"],
      [],
    ]),
  fc.integer({ min: 1200, max: 1300 }).map((count): [CaseEdit, string[]] => [
    [
      (c) => {
        c.engine.poolSlots = 2 ** 20;
        c.workload.requests = Array.from({ length: count }, (_, id) => ({
          ...c.workload.requests[0],
          id,
          maxNewTokens: 230,
        }));
      },
      "/workload/requests",
    ],
    ["--max-requests", "100000"],
  ]),
  fc.integer({ min: 1, max: 9999 }).map((max): [CaseEdit, string[]] => [
    [() => {}, "/model/preset"],
    ["--max-parameters", String(max)],
  ]),
);

export function caseDocuments(
  m: Materials,
): fc.Arbitrary<{ content: FileContent; pointer?: string; category: string }> {
  return fc.oneof(
    brokenJson(m.validCase).map((text) => ({ content: text, category: "malformed JSON" })),
    wrongTypes(m.validCase, CASE_TYPE_PATHS).map(([doc, pointer]) => ({
      content: { json: doc },
      pointer,
      category: "schema",
    })),
    fc.constantFrom(2, 0, "1").map((version) => ({
      content: { json: { ...clone(m.validCase), formatVersion: version } },
      pointer: "/formatVersion",
      category: "format version",
    })),
    impossibleConfig.map(([edit, pointer]) => {
      const doc = clone(m.validCase);
      edit(doc);
      return { content: { json: doc }, pointer, category: "impossible config" };
    }),
  );
}

// ---------------------------------------------------------------- golden files, outputs, traces

const GOLDEN_TYPE_PATHS = [
  "/formatVersion",
  "/suite",
  "/metadata/ep",
  "/metadata/threads",
  "/epsilon/target",
  "/models/target/spec/vocab",
  "/models/target/spec/hidden",
  "/models/target/digest",
  "/stats/tokens",
  "/cases/0/name",
  "/cases/0/case/engine/numSteps",
  "/cases/0/case/workload/requests/0/prompt",
  "/cases/0/expected/requests/0/tokens",
  "/cases/0/expected/requests/0/margins/0",
];

export function goldenDocuments(m: Materials): fc.Arbitrary<{ content: FileContent; pointer?: string }> {
  const edited = (edit: (g: Json) => void, pointer: string) => {
    const doc = clone(m.golden);
    edit(doc);
    return { content: { json: doc } as FileContent, pointer };
  };
  return fc.oneof(
    brokenJson(m.golden).map((text) => ({ content: text as FileContent })),
    wrongTypes(m.golden, GOLDEN_TYPE_PATHS).map(([doc, pointer]) => ({
      content: { json: doc } as FileContent,
      pointer,
    })),
    fc
      .stringMatching(/^[0-9a-f]{64}$/)
      .map((digest) => edited((g) => (g.models.target.digest = digest), "/models/target/digest")),
    fc
      .integer({ min: 100_001, max: INT32 })
      .map((step) =>
        edited(
          (g) => (g.cases[0].case.workload.requests[0].arrivalStep = step),
          "/cases/0/case/workload/requests/0/arrivalStep",
        ),
      ),
    fc.integer({ min: 2 ** 20, max: INT32 }).map((hidden) =>
      edited((g) => {
        g.models.target.spec.hidden = hidden;
        for (const entry of g.cases) entry.case.model.spec.hidden = hidden;
      }, "/cases/0/case/model/spec"),
    ),
    fc
      .integer({ min: CORES + 1, max: 100_000 })
      .map((threads) =>
        edited((g) => (g.cases[0].case.engine.runtime.threads = threads), "/cases/0/case/engine/runtime/threads"),
      ),
  );
}

/** Malformed outputs files: the whole text and where the error must be. */
export function outputsDocuments(m: Materials): fc.Arbitrary<{ content: string; line?: number; pointer?: string }> {
  const n = fc.nat({ max: m.lines.length - 1 });
  const text = (lines: unknown[]) => lines.map((line) => `${JSON.stringify(line)}\n`).join("");
  const withLine = (i: number, value: unknown) => text(m.lines.map((line, k) => (k === i ? value : line)));
  const line = (i: number) => m.lines[i] as Json;
  return fc.oneof(
    fc.tuple(n, fc.integer({ min: VOCAB, max: INT32 })).chain(([i, token]) =>
      fc.nat({ max: line(i).tokens.length - 1 }).map((at) => {
        const tokens = [...line(i).tokens];
        tokens[at] = token;
        return { content: withLine(i, { ...line(i), tokens }), line: i + 1, pointer: `/tokens/${at}` };
      }),
    ),
    fc.tuple(n, fc.integer({ min: 5, max: INT32 })).map(([i, len]) => ({
      content: withLine(i, { ...line(i), acceptLens: [len] }),
      line: i + 1,
      pointer: "/acceptLens/0",
    })),
    fc.tuple(n, fc.integer({ min: VOCAB, max: INT32 })).map(([i, token]) => ({
      content: withLine(i, { ...line(i), firstRoundDrafts: [token, 1, 1] }),
      line: i + 1,
      pointer: "/firstRoundDrafts/0",
    })),
    fc
      .tuple(n, fc.stringMatching(/^[a-z]{1,8}$/))
      .filter(([, name]) => !["unchunked", "tree"].includes(name))
      .map(([i, name]) => ({
        content: withLine(i, { ...line(i), case: name }),
        line: i + 1,
        pointer: "/case",
      })),
    fc
      .tuple(n, fc.integer({ min: 4, max: INT32 }))
      .map(([i, id]) => ({ content: withLine(i, { ...line(i), id }), line: i + 1, pointer: "/id" })),
    n.map((i) => ({ content: text([...m.lines, m.lines[i]]), line: m.lines.length + 1, pointer: "/id" })),
    fc.tuple(n, fc.constantFrom("formatVersion", "case", "id", "tokens")).map(([i, key]) => {
      const { [key]: _, ...rest } = line(i);
      return { content: withLine(i, rest), line: i + 1 };
    }),
    n.chain((i) =>
      fc.integer({ min: 1, max: JSON.stringify(m.lines[i]).length - 1 }).map((cut) => ({
        content: text(m.lines.slice(0, i)) + JSON.stringify(m.lines[i]).slice(0, cut),
        line: i + 1,
      })),
    ),
    fc.constant({ content: "" }),
  );
}

/** Malformed traces of golden case 'unchunked' and the pointer the error must name. */
export function traceDocuments(m: Materials): fc.Arbitrary<{ content: FileContent; pointer?: string }> {
  const events = (m.trace as Json).events as Json[];
  const e = fc.nat({ max: events.length - 1 });
  const edited = (edit: (t: Json) => void, pointer: string) => {
    const doc = clone(m.trace);
    edit(doc);
    return { content: { json: doc } as FileContent, pointer };
  };
  const rowAt = e.chain((i) => fc.nat({ max: events[i].rows.length - 1 }).map((r) => [i, r] as const));
  return fc.oneof(
    fc.constant(edited((t) => (t.events = []), "/events")),
    fc
      .tuple(rowAt, fc.integer({ min: VOCAB, max: INT32 }))
      .map(([[i, r], token]) => edited((t) => (t.events[i].rows[r].token = token), `/events/${i}/rows/${r}/token`)),
    fc
      .tuple(rowAt, fc.integer({ min: VOCAB, max: INT32 }))
      .map(([[i, r], token]) => edited((t) => (t.events[i].rows[r].predict = token), `/events/${i}/rows/${r}/predict`)),
    fc
      .tuple(rowAt, fc.oneof(fc.integer({ min: 256, max: INT32 }), fc.integer({ min: -INT32, max: -1 })))
      .map(([[i, r], position]) =>
        edited((t) => (t.events[i].rows[r].position = position), `/events/${i}/rows/${r}/position`),
      ),
    fc
      .tuple(rowAt, fc.integer({ min: 4, max: INT32 }))
      .map(([[i, r], request]) => edited((t) => (t.events[i].rows[r].request = request), `/events/${i}/rows/${r}`)),
    fc
      .tuple(e, e)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) =>
        edited(
          (t) => (t.events[Math.max(a, b)].index = t.events[Math.min(a, b)].index),
          `/events/${Math.max(a, b)}/index`,
        ),
      ),
    brokenJson(m.trace).map((text) => ({ content: text as FileContent })),
    wrongTypes(m.trace, [
      "/formatVersion",
      "/engine",
      "/events",
      "/events/0/phase",
      "/events/0/rows",
      "/events/1/index",
    ]).map(([doc, pointer]) => ({ content: { json: doc } as FileContent, pointer })),
    fc.constant({ content: { dir: true } as FileContent }),
  );
}

// ---------------------------------------------------------------- failure records

const BAD_SIBLING = fc.oneof(
  fc.constantFrom(
    "../../../../etc/hostname",
    "/etc/passwd",
    "..",
    ".",
    ".hidden.json",
    "a b.json",
    "",
    "x/../y.json",
    "C:\\x.json",
  ),
  fc
    .tuple(fc.stringMatching(/^[a-z.]{0,6}$/), fc.constantFrom("/", "\\", "../"), fc.stringMatching(/^[a-z.]{0,6}$/))
    .map(([a, sep, b]) => `${a}${sep}${b}`),
);

export function recordDocuments(
  m: Materials,
): fc.Arbitrary<{ content: FileContent; pointer?: string; sibling?: FileContent }> {
  const edited = (edit: (r: Json) => void, pointer: string) => {
    const doc = clone(m.record);
    edit(doc);
    return { content: { json: doc } as FileContent, pointer };
  };
  const notALaw = fc.string({ maxLength: 20 }).filter((law) => !RECORD_LAWS.includes(law));
  return fc.oneof(
    notALaw.map((law) => edited((r) => (r.laws = [law]), "/laws/0")),
    notALaw.filter((law) => !LAW_NAMES.includes(law)).map((law) => edited((r) => (r.checked = [law]), "/checked/0")),
    BAD_SIBLING.map((name) => edited((r) => (r.traceFile = name), "/traceFile")),
    BAD_SIBLING.map((name) => edited((r) => (r.caseFile = name), "/caseFile")),
    fc
      .constantFrom("formatVersion", "laws", "violation", "case", "caseFile", "replay")
      .map((key) => edited((r) => delete r[key], `/${key}`)),
    impossibleConfig.map(([edit, pointer]) => edited((r) => edit(r.case), `/case${pointer}`)),
    // A valid record whose recorded trace is not a trace: named by its own path.
    fc
      .oneof(
        brokenJson(m.trace).map((text): FileContent => text),
        fc.constant<FileContent>({ dir: true }),
        fc.constant<FileContent>({ fifo: true }),
        fc.constant<FileContent>({ json: { formatVersion: 1, events: "none" } }),
      )
      .map((sibling) => ({ content: { json: clone(m.record) } as FileContent, sibling })),
  );
}

export { clone, INT32, VOCAB };
