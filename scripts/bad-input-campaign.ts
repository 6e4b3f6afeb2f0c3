// The bad-input campaign of issue 9, as a script: malformed inputs for every command, each run as a real
// subprocess (`node bin/specconf.js ...`, so hangs and stack traces show as a user sees them), checked
// against the contract: exit 2, exactly one line on stderr naming the place (flag, file, JSON path), no
// stack trace, nothing written (the output folder unchanged). Prints one line per input that breaks it and
// the count per category.
//
//   npx tsx scripts/bad-input-campaign.ts [--bin PATH] [--only CATEGORY] [--jobs 2] [--timeout 30]
//
// --bin runs another checkout's CLI (e.g. the commit before the fix) against the same inputs.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { snapshotDir } from "../test/helpers/dir-snapshot.ts";

const { values } = parseArgs({
  options: {
    bin: { type: "string", default: "bin/specconf.js" },
    only: { type: "string" },
    jobs: { type: "string", default: "2" },
    timeout: { type: "string", default: "30" },
    verbose: { type: "boolean", default: false },
  },
});
const BIN = resolve(values.bin!);
const REPO = resolve(BIN, "../..");
const TIMEOUT_MS = Number(values.timeout) * 1000;

interface Input {
  category: string;
  name: string;
  argv: string[];
  /** What stderr must name (a flag, a file, a JSON path). */
  place: string;
  /** Files to create first, relative to the input's own folder ($D in argv). */
  files?: Record<string, string | { dir: true } | { fifo: true } | { json: unknown }>;
  /** Run in this folder instead of the repository (`outside` = a fresh empty folder). */
  cwd?: "outside";
}

const base = mkdtempSync(join(tmpdir(), "specconf-campaign-"));
const caseOk = {
  formatVersion: 1,
  model: { preset: "tiny" },
  draft: { kind: "mirror", noiseAlpha: 0.2, tapDelta: 0.1, truncatedLayers: 1, seed: 1 },
  engine: {
    mode: "speculative",
    numSteps: 3,
    topk: 1,
    numDraftTokens: 4,
    chunkSize: 3,
    pageSize: 1,
    tokenBudget: 256,
    poolSlots: 4096,
    faults: [],
    runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
  },
  workload: {
    requests: [{ id: 0, prompt: [1, 5, 9, 13, 17, 40, 41], maxNewTokens: 8, arrivalStep: 0 }],
    aborts: [],
  },
};
type CaseJson = typeof caseOk & Record<string, unknown>;
function caseWith(edit: (c: CaseJson) => void): { json: unknown } {
  const c = structuredClone(caseOk) as CaseJson;
  edit(c);
  return { json: c };
}
const tinySpec = {
  name: "custom",
  vocab: 64,
  hidden: 32,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  headDim: 8,
  intermediate: 64,
  ropeTheta: 10000,
  maxPositions: 256,
  dtype: "float32",
  seed: 1,
  bosId: 1,
  eosId: 2,
  preamble: [1, 5, 9, 13, 17],
  rmsEps: 1e-5,
  logitStd: 4,
};
function specWith(edit: Partial<typeof tinySpec>): { json: unknown } {
  return caseWith((c) => ((c as { model: unknown }).model = { spec: { ...tinySpec, ...edit } }));
}

const GOLDEN = "golden/tiny-mirror.json";
const golden = JSON.parse(readFileSync(join(REPO, GOLDEN), "utf8"));
function goldenWith(edit: (g: typeof golden) => void): { json: unknown } {
  const g = structuredClone(golden);
  edit(g);
  return { json: g };
}

const inputs: Input[] = [];
const add = (category: string, name: string, argv: string[], place: string, extra: Partial<Input> = {}) =>
  inputs.push({ category, name, argv, place, ...extra });

// Impossible or absurd configs in case files: they must not reach the engine.
const config = (name: string, file: { json: unknown }, place: string) =>
  add("impossible config", name, ["run", "--case", "$D/case.json"], place, { files: { "case.json": file } });
config(
  "topk beyond the model",
  caseWith((c) => Object.assign(c.engine, { topk: 50, numDraftTokens: 60 })),
  "/engine/topk",
);
config(
  "steps beyond maxPositions",
  caseWith((c) => Object.assign(c.engine, { numSteps: 5000, numDraftTokens: 5001 })),
  "/engine",
);
config(
  "unknown preset",
  caseWith((c) => (c.model = { preset: "huge" })),
  "/model/preset",
);
config(
  "preset named constructor",
  caseWith((c) => (c.model = { preset: "constructor" })),
  "/model/preset",
);
config(
  "pool slots too small",
  caseWith((c) => (c.engine.poolSlots = 4)),
  "/engine/poolSlots",
);
config(
  "pool slots astronomical",
  caseWith((c) => (c.engine.poolSlots = 1e15)),
  "/engine/poolSlots",
);
config(
  "request id beyond safe integers",
  caseWith((c) => (c.workload.requests[0].id = 2 ** 60)),
  "/workload/requests/0/id",
);
config("huge hidden", specWith({ hidden: 1 << 20 }), "/model/spec");
config("huge maxPositions", specWith({ maxPositions: 1e12 }), "/model/spec/maxPositions");
config("huge vocab", specWith({ vocab: 1e9 }), "/model/spec");
config(
  "arrival step 1e9",
  caseWith((c) => (c.workload.requests[0].arrivalStep = 1e9)),
  "/workload/requests/0/arrivalStep",
);
config(
  "abort step 1e9",
  caseWith((c) => (c.workload.aborts = [{ request: 0, step: 1e9, beforeForward: 0 }] as never)),
  "/workload/aborts/0/step",
);
config(
  "retract step 1e9",
  caseWith((c) => Object.assign(c.workload, { retracts: [{ request: 0, step: 1e9, beforeForward: 0 }] })),
  "/workload/retracts/0/step",
);
config(
  "truncated layers beyond the target",
  caseWith((c) => Object.assign(c.draft, { kind: "truncated-mirror", truncatedLayers: 9 })),
  "/draft/truncatedLayers",
);
config(
  "prompt token = vocab",
  caseWith((c) => (c.workload.requests[0].prompt = [1, 5, 64])),
  "/workload/requests/0/prompt/2",
);
config(
  "seed beyond safe integers",
  caseWith((c) => (c.draft.seed = 2 ** 70)),
  "/draft/seed",
);
config(
  "numDraftTokens astronomical (tree)",
  caseWith((c) => Object.assign(c.engine, { topk: 2, numDraftTokens: 1e12 })),
  "/engine/numDraftTokens",
);
config(
  "page larger than the pool",
  caseWith((c) => Object.assign(c.engine, { pageSize: 8192 })),
  "/engine/pageSize",
);
config(
  "chunk size 1e15",
  caseWith((c) => (c.engine.chunkSize = 1e15)),
  "/engine/chunkSize",
);
config(
  "beforeForward 1e300",
  caseWith((c) => (c.workload.aborts = [{ request: 0, step: 1, beforeForward: 1e300 }] as never)),
  "/workload/aborts/0/beforeForward",
);

// Resource bombs: refused at once, naming the flag or path.
const bomb = (name: string, argv: string[], place: string, extra: Partial<Input> = {}) =>
  add("resource bomb", name, argv, place, extra);
bomb("a million requests (flag)", ["run", "--requests", "1000000"], "--requests");
bomb("999 threads (flag)", ["run", "--threads", "999"], "--threads");
bomb("100000 max new tokens (flag)", ["run", "--max-new-tokens", "100000"], "--max-new-tokens");
bomb("tree verify rows (flag)", ["run", "--topk", "8", "--steps", "60", "--draft-tokens", "20000"], "--draft-tokens");
bomb("steps 100000 (flag)", ["run", "--steps", "100000"], "--steps");
bomb("a million requests (case)", ["run", "--case", "$D/case.json"], "/workload/requests", {
  files: {
    "case.json": caseWith((c) => {
      c.workload.requests = Array.from({ length: 1_000_000 }, (_, id) => ({ ...caseOk.workload.requests[0], id }));
    }),
  },
});
bomb("999 threads (case)", ["run", "--case", "$D/case.json"], "/engine/runtime/threads", {
  files: { "case.json": caseWith((c) => (c.engine.runtime.threads = 999)) },
});

// Flags silently ignored.
const ignored = (name: string, argv: string[], place: string, extra: Partial<Input> = {}) =>
  add("ignored flag", name, argv, place, { files: { "case.json": { json: caseOk } }, ...extra });
ignored("--steps with --case", ["run", "--case", "$D/case.json", "--steps", "2"], "--steps");
ignored("--preset with --case", ["run", "--case", "$D/case.json", "--preset", "small-mha"], "--preset");
ignored("--requests with --case", ["run", "--case", "$D/case.json", "--requests", "2"], "--requests");
ignored("--fault with --case", ["run", "--case", "$D/case.json", "--fault", "bonus-stride"], "--fault");
ignored("--seed with --case", ["run", "--case", "$D/case.json", "--seed", "3"], "--seed");
ignored("--golden without --engine", ["check", "--golden", "--runs", "1"], "--golden");
ignored("--engine-timeout without --engine", ["check", "--engine-timeout", "5", "--runs", "1"], "--engine-timeout");

// Output paths.
const out = (name: string, argv: string[], place: string, files?: Input["files"]) =>
  add("output path", name, argv, place, { files });
out("run --trace is a directory", ["run", "--trace", "$D/dir"], "--trace", { dir: { dir: true } });
out("run --trace parent missing", ["run", "--trace", "$D/missing/trace.json"], "--trace");
out("run --trace parent is a file", ["run", "--trace", "$D/file/trace.json"], "--trace", { file: "x" });
out("run --trace read-only", ["run", "--trace", "/sys/trace.json"], "--trace");
out("run --trace is a FIFO", ["run", "--trace", "$D/fifo"], "--trace", { fifo: { fifo: true } });
out(
  "check --junit is a directory",
  ["check", "--law", "positions", "--runs", "1", "--junit", "$D/dir", "--no-write"],
  "--junit",
  { dir: { dir: true } },
);
out(
  "check --junit parent missing",
  ["check", "--law", "positions", "--runs", "1", "--junit", "$D/no/j.xml", "--no-write"],
  "--junit",
);
out(
  "check --failures is a file",
  ["check", "--law", "positions", "--runs", "1", "--failures", "$D/file"],
  "--failures",
  { file: "x" },
);
out(
  "check --failures read-only",
  ["check", "--law", "positions", "--runs", "1", "--failures", "/sys/failures"],
  "--failures",
);
out(
  "validate --report is a directory",
  ["validate", "--golden", GOLDEN, "--outputs", "$BASE/out.jsonl", "--report", "$D/dir"],
  "--report",
  { dir: { dir: true } },
);
out(
  "validate --report parent missing",
  ["validate", "--golden", GOLDEN, "--outputs", "$BASE/out.jsonl", "--report", "$D/no/r.json"],
  "--report",
);
out("export --out is a file", ["export", "--format", "onnx", "--out", "$D/file"], "--out", { file: "x" });
out("export --out read-only", ["export", "--format", "onnx", "--out", "/sys/exported"], "--out");
out(
  "golden dump --outputs is a directory",
  ["golden", "dump", "--golden", GOLDEN, "--outputs", "$D/dir"],
  "--outputs",
  { dir: { dir: true } },
);
out(
  "golden dump --outputs parent missing",
  ["golden", "dump", "--golden", GOLDEN, "--outputs", "$D/no/o.jsonl"],
  "--outputs",
);
out(
  "golden dump --trace-dir is a file",
  ["golden", "dump", "--golden", GOLDEN, "--outputs", "$D/o.jsonl", "--trace-dir", "$D/file"],
  "--trace-dir",
  { file: "x" },
);
out("golden update --dir is a file", ["golden", "update", "--dir", "$D/file"], "--dir", { file: "x" });
out("run --trace names the input's own folder", ["run", "--trace", "$D"], "--trace");

// validate: inputs that must be bad input, not a law verdict.
const outputsLine = (edit: Record<string, unknown>) =>
  `${JSON.stringify({ formatVersion: 1, case: "unchunked", id: 0, tokens: [1], ...edit })}\n`;
const val = (name: string, argv: string[], place: string, files: Input["files"]) =>
  add("validate input", name, argv, place, { files });
val(
  "outputs token = vocab",
  ["validate", "--golden", GOLDEN, "--outputs", "$D/o.jsonl", "--case", "unchunked"],
  "/tokens/0",
  { "o.jsonl": outputsLine({ tokens: [64] }) },
);
val(
  "outputs acceptLens beyond S + 1",
  ["validate", "--golden", GOLDEN, "--outputs", "$D/o.jsonl", "--case", "unchunked"],
  "/acceptLens/0",
  { "o.jsonl": outputsLine({ acceptLens: [99] }) },
);
val(
  "outputs draft token = vocab",
  ["validate", "--golden", GOLDEN, "--outputs", "$D/o.jsonl", "--case", "unchunked"],
  "/firstRoundDrafts/0",
  { "o.jsonl": outputsLine({ firstRoundDrafts: [64, 1, 1] }) },
);
const traceOf = (events: unknown[]) => ({ json: { formatVersion: 1, engine: { name: "x" }, events } });
const traceArgs = ["validate", "--golden", GOLDEN, "--outputs", "$BASE/out.jsonl", "--trace", "unchunked=$D/t.json"];
val("trace with no events", traceArgs, "/events", { "t.json": traceOf([]) });
val("trace prefill token = vocab", traceArgs, "/events/0/rows/0/token", {
  "t.json": traceOf([{ index: 0, phase: "prefill", rows: [{ request: 0, token: 64, position: 0 }] }]),
});
val("trace predict = vocab", traceArgs, "/events/0/rows/0/predict", {
  "t.json": traceOf([{ index: 0, phase: "prefill", rows: [{ request: 0, token: 1, position: 0, predict: 64 }] }]),
});
val("trace duplicate event index", traceArgs, "/events/1/index", {
  "t.json": traceOf([
    { index: 0, phase: "prefill", rows: [{ request: 0, token: 1, position: 0 }] },
    { index: 0, phase: "prefill", rows: [{ request: 0, token: 5, position: 1 }] },
  ]),
});
val("trace row of an unknown request", traceArgs, "/events/0/rows/0/request", {
  "t.json": traceOf([{ index: 0, phase: "prefill", rows: [{ request: 77, token: 1, position: 0 }] }]),
});
val("trace position beyond maxPositions", traceArgs, "/events/0/rows/0/position", {
  "t.json": traceOf([{ index: 0, phase: "prefill", rows: [{ request: 0, token: 1, position: 1e9 }] }]),
});
val(
  "--epsilon negative",
  ["validate", "--golden", GOLDEN, "--outputs", "$BASE/out.jsonl", "--epsilon", "-1"],
  "--epsilon",
  {},
);
val(
  "golden with a huge hidden",
  ["validate", "--golden", "$D/g.json", "--outputs", "$BASE/out.jsonl"],
  "/models/target/spec",
  {
    "g.json": goldenWith((g) => (g.models.target.spec.hidden = 1 << 20)),
  },
);
val(
  "golden case with 1e9 arrival",
  ["validate", "--golden", "$D/g.json", "--outputs", "$BASE/out.jsonl"],
  "/cases/0/case/workload/requests/0/arrivalStep",
  {
    "g.json": goldenWith((g) => (g.cases[0].case.workload.requests[0].arrivalStep = 1e9)),
  },
);

// replay of crafted failure files.
const record = () => JSON.parse(readFileSync(join(base, "failure.json"), "utf8"));
const rep = (name: string, edit: (r: Record<string, unknown>) => void, place: string, files: Input["files"] = {}) =>
  add("replay input", name, ["replay", "$D/f.json"], place, {
    files: {
      ...files,
      "f.json": {
        get json() {
          const r = record();
          edit(r);
          return r;
        },
      } as { json: unknown },
    },
  });
rep("unknown law", (r) => (r.laws = ["no such law"]), "/laws/0");
rep("case names an unknown preset", (r) => ((r.case as CaseJson).model = { preset: "huge" }), "/case/model/preset");
rep("sibling trace corrupt", (r) => (r.traceFile = "t.json"), "t.json", { "t.json": "{ not json" });
rep("sibling trace is a directory", (r) => (r.traceFile = "t.json"), "t.json", { "t.json": { dir: true } });
rep("traceFile outside the folder", (r) => (r.traceFile = "../../../../etc/hostname"), "/traceFile");
rep("caseFile outside the folder", (r) => (r.caseFile = "/etc/passwd"), "/caseFile");
rep("absolute traceFile", (r) => (r.traceFile = "/etc/hostname"), "/traceFile");
rep(
  "case with 1e9 abort step",
  (r) => ((r.case as CaseJson).workload.aborts = [{ request: 0, step: 1e9, beforeForward: 0 }] as never),
  "/case/workload/aborts/0/step",
);
add("replay input", "a directory", ["replay", "$D/dir"], "$D/dir", { files: { dir: { dir: true } } });
add("replay input", "missing file", ["replay", "$D/none.json"], "$D/none.json");

// check --engine.
add("check --engine", "empty command", ["check", "--engine", ""], "--engine");
add("check --engine", "blank command", ["check", "--engine", "   "], "--engine");
add("check --engine", "--golden missing", ["check", "--engine", "true", "--golden", "$D/none.json"], "$D/none.json");
add(
  "check --engine",
  "golden dir missing outside the repo",
  ["check", "--engine", "true", "--golden", "golden/x.json"],
  "golden/x.json",
  { cwd: "outside" },
);

// Flags.
const flag = (name: string, argv: string[], place: string) => add("flag", name, argv, place);
flag("--chunk -3", ["run", "--chunk", "-3"], "--chunk");
flag("--steps -1", ["run", "--steps", "-1"], "--steps");
flag("--steps 0", ["run", "--steps", "0"], "--steps");
flag("--steps 1e3", ["run", "--steps", "1e3"], "--steps");
flag("--seed 2^60", ["run", "--seed", "1152921504606846976"], "--seed");
flag("--draft-tokens with topk 1", ["run", "--draft-tokens", "9"], "--draft-tokens");
flag("--topk beyond the graph", ["run", "--topk", "9"], "--topk");
flag("unknown flag", ["run", "--stepz", "3"], "--stepz");
flag("missing value", ["validate", "--golden"], "--golden");
flag("bad choice", ["run", "--draft", "medusa"], "--draft");
flag("stray positional", ["run", "extra"], "extra");
flag("--law unknown", ["check", "--law", "nope"], "--law");
flag("--retract-every 1", ["run", "--retract-every", "1"], "--retract-every");
flag("golden unknown subcommand", ["golden", "frob"], "frob");
flag("mutants --max-runs 0", ["mutants", "--max-runs", "0"], "--max-runs");
flag("replay two files", ["replay", "a.json", "b.json"], "FILE");
flag("--from after --to", ["replay", "$BASE/failure.json", "--from", "9", "--to", "2"], "--from");
flag("export missing --format", ["export", "--out", "x"], "--format");
flag("adapter stray positional", ["adapter", "x"], "x");

// Generic malformed files.
const mal = (name: string, argv: string[], place: string, files: Input["files"]) =>
  add("malformed file", name, argv, place, { files });
mal("case not JSON", ["run", "--case", "$D/c.json"], "$D/c.json", { "c.json": "{" });
mal("case empty", ["run", "--case", "$D/c.json"], "$D/c.json", { "c.json": "" });
mal("case wrong version", ["run", "--case", "$D/c.json"], "/formatVersion", {
  "c.json": caseWith((c) => (c.formatVersion = 2 as 1)),
});
mal("case missing engine", ["run", "--case", "$D/c.json"], "/engine", {
  "c.json": caseWith((c) => delete (c as Partial<CaseJson>).engine),
});
mal("golden not JSON", ["golden", "verify", "$D/g.json"], "$D/g.json", { "g.json": "[1," });
mal("golden wrong digest", ["golden", "verify", "$D/g.json"], "/models/target/digest", {
  "g.json": goldenWith((g) => (g.models.target.digest = "0".repeat(64))),
});
mal("outputs truncated", ["validate", "--golden", GOLDEN, "--outputs", "$D/o.jsonl"], "$D/o.jsonl:1", {
  "o.jsonl": '{"formatVersion":1,"ca',
});
mal(
  "dump golden missing",
  ["golden", "dump", "--golden", "$D/none.json", "--outputs", "$D/o.jsonl"],
  "$D/none.json",
  {},
);
mal(
  "export golden wrong version",
  ["export", "--format", "onnx", "--out", "$D/x", "--golden", "$D/g.json"],
  "/formatVersion",
  {
    "g.json": goldenWith((g) => (g.formatVersion = 9)),
  },
);

interface Outcome {
  input: Input;
  code: number | null;
  signal: string | null;
  stderr: string;
  timedOut: boolean;
  changed: string[];
}

function materialize(input: Input, dir: string): string[] {
  for (const [name, content] of Object.entries(input.files ?? {})) {
    const path = join(dir, name);
    if (typeof content === "string") writeFileSync(path, content);
    else if ("dir" in content) mkdirSync(path, { recursive: true });
    else if ("fifo" in content) execFileSync("mkfifo", [path]);
    else writeFileSync(path, JSON.stringify(content.json));
  }
  return input.argv.map((arg) => arg.replaceAll("$D", dir).replaceAll("$BASE", base));
}

function runOne(input: Input, index: number): Promise<Outcome> {
  const dir = join(base, `input-${index}`);
  mkdirSync(dir);
  const argv = materialize(input, dir);
  const cwd = input.cwd === "outside" ? mkdtempSync(join(tmpdir(), "specconf-outside-")) : REPO;
  const before = snapshotDir(dir);
  const beforeCwd = snapshotDir(join(cwd, ".specconf"));
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd, detached: true, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, TIMEOUT_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const after = snapshotDir(dir);
      const changed = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k));
      const afterCwd = snapshotDir(join(cwd, ".specconf"));
      for (const k of new Set([...beforeCwd.keys(), ...afterCwd.keys()]))
        if (beforeCwd.get(k) !== afterCwd.get(k)) changed.push(`.specconf/${k}`);
      done({
        input: { ...input, place: input.place.replaceAll("$D", dir).replaceAll("$BASE", base) },
        code,
        signal,
        stderr,
        timedOut,
        changed,
      });
    });
  });
}

function verdict(outcome: Outcome): string | undefined {
  if (outcome.timedOut) return `hangs (killed after ${TIMEOUT_MS / 1000}s)`;
  const lines = outcome.stderr.trimEnd().split("\n");
  if (outcome.code !== 2)
    return `exit ${outcome.code ?? outcome.signal}: ${lines.slice(0, 2).join(" | ").slice(0, 220)}`;
  if (/\n\s+at /.test(outcome.stderr)) return `stack trace: ${lines[0].slice(0, 200)}`;
  if (lines.length !== 1 || outcome.stderr === "")
    return `${lines.length} stderr lines: ${lines.slice(0, 2).join(" | ").slice(0, 200)}`;
  if (!outcome.stderr.includes(outcome.input.place))
    return `does not name ${outcome.input.place}: ${lines[0].slice(0, 200)}`;
  if (outcome.changed.length > 0) return `wrote ${outcome.changed.join(", ")}`;
  return undefined;
}

async function prepare(): Promise<void> {
  const run = (argv: string[]) =>
    new Promise<void>((done, fail) => {
      // The checkout under test writes its own materials (its failure records are what its replay reads).
      const child = spawn(process.execPath, [BIN, ...argv], {
        cwd: REPO,
        stdio: "ignore",
      });
      child.on("close", (code) =>
        code === 0 || code === 1 ? done() : fail(new Error(`${argv.join(" ")}: exit ${code}`)),
      );
    });
  await run(["golden", "dump", "--golden", GOLDEN, "--outputs", join(base, "out.jsonl")]);
  const failures = join(base, "failures");
  await run([
    "check",
    "--law",
    "positions",
    "--fault",
    "cross-request-mask-leak",
    "--runs",
    "20",
    "--seed",
    "1",
    "--failures",
    failures,
    "--shrink-seconds",
    "5",
  ]);
  const { readdirSync } = await import("node:fs");
  const name = readdirSync(failures).find(
    (file) => file.endsWith(".json") && !file.includes(".case.") && !file.includes(".trace."),
  );
  if (!name) throw new Error("no failure file was written");
  writeFileSync(join(base, "failure.json"), readFileSync(join(failures, name)));
}

async function main(): Promise<void> {
  await prepare();
  chmodSync(base, 0o755);
  const selected = inputs.filter((input) => !values.only || input.category === values.only);
  const outcomes: Outcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < selected.length) {
      const index = next++;
      outcomes[index] = await runOne(selected[index], index);
    }
  };
  await Promise.all(Array.from({ length: Number(values.jobs) }, worker));
  const byCategory = new Map<string, { total: number; broken: number }>();
  for (const outcome of outcomes) {
    const problem = verdict(outcome);
    const entry = byCategory.get(outcome.input.category) ?? { total: 0, broken: 0 };
    byCategory.set(outcome.input.category, entry);
    entry.total += 1;
    if (problem) {
      entry.broken += 1;
      process.stdout.write(`BROKEN [${outcome.input.category}] ${outcome.input.name}: ${problem}\n`);
    } else if (values.verbose)
      process.stdout.write(`ok     [${outcome.input.category}] ${outcome.input.name}: ${outcome.stderr.trimEnd()}\n`);
  }
  const total = outcomes.length;
  const broken = [...byCategory.values()].reduce((sum, entry) => sum + entry.broken, 0);
  process.stdout.write(`\n${broken} of ${total} inputs break the contract\n`);
  for (const [category, entry] of byCategory) process.stdout.write(`  ${category}: ${entry.broken}/${entry.total}\n`);
  rmSync(base, { recursive: true, force: true });
}

await main();
