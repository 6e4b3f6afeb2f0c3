// `specconf check`'s flags, the combinations it refuses (a flag the chosen mode would silently ignore), the
// seed (--seed, else SPECCONF_SEED, else a fresh one: always printed) and the laws --law names.
import { randomInt } from "node:crypto";
import { availableParallelism } from "node:os";
import { FAULT_NAMES, type FaultName } from "../case/faults.ts";
import type { Capabilities } from "../adapter/protocol.ts";
import { loadPins } from "../failures/pins.ts";
import type { SuiteJob } from "../properties/suite-job.ts";
import { dimensionProperties } from "../properties/law-properties.ts";
import { EXECUTION_PROVIDERS } from "../runtime/ort.ts";
import { lawByName, LAW_NAMES } from "../laws/registry.ts";
import { profileNames } from "../profiles/profiles.ts";
import { DEFAULT_FAILURE_DIR } from "../failures/failure-file.ts";
import { defineFlags, rejectCombined, UsageError, type FlagValues } from "./args.ts";
import type { LawRequirement } from "../report/judged.ts";

export const CHECK_FLAGS = defineFlags({
  law: {
    type: "string",
    multiple: true,
    valueName: "NAME",
    description: `check only this law (repeatable): ${LAW_NAMES.join(", ")}`,
  },
  property: {
    type: "string",
    multiple: true,
    valueName: "NAME",
    description:
      "run only this law's property suite, or a case dimension's (model spec variants, family spec variants) (repeatable), every law still checking its runs: one check split over processes (scripts/gpu/run-on-gpu.sh)",
  },
  runs: { type: "integer", min: 1, default: 30, description: "generated runs per law property" },
  workers: {
    type: "integer",
    min: 1,
    default: availableParallelism(),
    description: "worker processes the runs spread over (same verdicts and shrunk cases for every count)",
  },
  shard: {
    type: "string",
    valueName: "K/N",
    description:
      "run only shard K of N (a deterministic share of every law's runs; `specconf merge` combines the --json reports)",
  },
  seed: { type: "integer", description: "fast-check seed (default: SPECCONF_SEED, else a fresh one; always printed)" },
  fault: {
    type: "choice",
    choices: FAULT_NAMES,
    multiple: true,
    description: "switch a named fault on in every generated case",
  },
  ep: {
    type: "choice",
    choices: EXECUTION_PROVIDERS,
    default: "cpu",
    description: "ONNX Runtime execution provider of every generated case (webgpu: float32 presets only)",
  },
  "shrink-seconds": { type: "integer", min: 0, default: 30, description: "stop shrinking a failure after this long" },
  twins: {
    type: "choice",
    choices: ["combined", "separate"],
    default: "combined",
    description:
      "invariance laws: first against one canonical twin (each law's own twin only on a failure), or each against its own twin",
  },
  "require-laws": {
    type: "string",
    valueName: "N|LAW,LAW",
    description:
      "fail (exit 1) unless at least N laws judged a case (held or failed on one), or unless each law listed (comma-separated) did; a law never checkable or with no applicable case judged nothing",
  },
  json: { type: "boolean", description: "print one JSON object" },
  junit: { type: "string", valueName: "FILE", description: "also write a JUnit XML report" },
  html: {
    type: "string",
    valueName: "FILE",
    description:
      "also write one self-contained HTML report (verdicts, coverage, each failure's case, tree, step tables)",
  },
  failures: {
    type: "string",
    default: DEFAULT_FAILURE_DIR,
    valueName: "DIR",
    description: "where shrunk failures are written",
  },
  "no-write": { type: "boolean", description: "do not write failure files" },
  engine: {
    type: "string",
    valueName: "COMMAND",
    description: "check an external engine speaking the JSON Lines protocol (docs/adapter.md) on generated cases",
  },
  "engine-timeout": {
    type: "integer",
    min: 1,
    default: 60,
    description: "with --engine: seconds per request before the engine is killed (a failing case)",
  },
  "eagle3-oracle": {
    type: "boolean",
    description:
      "every EAGLE-3 head drawn is the EAGLE-3 oracle on the bigram preset (mirror acceptance judges its rounds)",
  },
  golden: {
    type: "boolean",
    description: "with --engine: run the golden suites' fixed cases instead of generated ones",
  },
  "golden-file": {
    type: "string",
    multiple: true,
    valueName: "FILE",
    description: "with --engine --golden: the golden files whose cases to run (default: golden/*.json)",
  },
  pins: {
    type: "string",
    valueName: "FILE",
    description:
      "with --engine: laws pinned as the engine's known findings (docs/findings/*.pins.json): reported, not failing the run, and each must still fail",
  },
  outputs: {
    type: "string",
    valueName: "DIR",
    description: "with --engine --golden: write each suite's outputs as DIR/<suite>.jsonl (for specconf validate)",
  },
  profile: {
    type: "choice",
    choices: profileNames(),
    default: "strict",
    description: "with --engine: the engine's documented conventions the laws relax (docs/validate.md)",
  },
});

export type CheckFlagValues = FlagValues<typeof CHECK_FLAGS>;

/** Flags the chosen mode (reference, --engine, --engine --golden) would silently ignore are refused. */
export function rejectIgnoredFlags(values: CheckFlagValues, given: ReadonlySet<string>): void {
  if (values.engine === undefined)
    rejectCombined(
      given,
      ["golden", "golden-file", "outputs", "engine-timeout", "profile", "pins"],
      "checking the reference engine (they need --engine)",
    );
  else if (values.engine.trim() === "")
    throw new UsageError("--engine needs a command that starts the engine, got an empty one", "--engine");
  if (values.engine !== undefined) rejectCombined(given, ["ep"], "--engine (the engine runs on its own device)");
  if (values.engine !== undefined && !values.golden)
    rejectCombined(given, ["golden-file", "outputs"], "generated cases (it needs --golden)");
  if (values.engine !== undefined && values.golden)
    rejectCombined(
      given,
      [
        "law",
        "property",
        "runs",
        "seed",
        "shrink-seconds",
        "twins",
        "junit",
        "html",
        "failures",
        "no-write",
        "pins",
        "workers",
        "shard",
        "require-laws",
        "eagle3-oracle",
      ],
      "--golden (the golden suites' fixed cases are checked as they are, nothing is generated or shrunk)",
    );
}

export function seedFromEnvironment(flag: number | undefined): number {
  if (flag !== undefined) return flag;
  const raw = process.env.SPECCONF_SEED;
  if (raw !== undefined && raw.trim() !== "") {
    if (!/^[+-]?\d+$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw)))
      throw new UsageError(`SPECCONF_SEED must be an integer, got '${raw}'`);
    return Number(raw);
  }
  return randomInt(0, 2 ** 31 - 1);
}

export function resolveLaws(names: readonly string[]): string[] {
  return names.map((name) => {
    const law = lawByName(name);
    if (!law) throw new UsageError(`--law: unknown law '${name}' (known: ${LAW_NAMES.join(", ")})`, "--law");
    return law.name;
  });
}

/** --property names: a law's (its property) or a case dimension's property (law-properties.ts dimensionProperties). */
export function resolveProperties(names: readonly string[]): string[] {
  const dimensions = dimensionProperties().map((property) => property.law);
  return names.map((name) => {
    if (dimensions.includes(name)) return name;
    if (!lawByName(name))
      throw new UsageError(
        `--property: unknown property '${name}' (a law's name, or one of: ${dimensions.join(", ")})`,
        "--property",
      );
    return lawByName(name)!.name;
  });
}

/** --shard K/N: shard K (1-based) of N, or a UsageError naming the flag. */
export function parseShard(raw: string | undefined): { index: number; count: number } | undefined {
  if (raw === undefined) return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(raw.trim());
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || count < 1 || index < 1 || index > count)
    throw new UsageError(`--shard must be K/N with 1 <= K <= N, got '${raw}'`, "--shard");
  return { index, count };
}

/** The suite as check --workers' processes take it (suite-job.ts). */
export function suiteJob(
  values: CheckFlagValues,
  seed: number,
  engine: { name: string; capabilities: Capabilities } | undefined,
  lawFilter: ReadonlySet<string>,
): SuiteJob {
  return {
    runs: values.runs,
    seed,
    faults: values.fault as FaultName[],
    ep: values.ep,
    laws: values.law.length > 0 ? [...lawFilter] : undefined,
    shrinkSeconds: values["shrink-seconds"],
    twins: values.twins as "combined" | "separate",
    failureDir: values["no-write"] ? false : values.failures,
    engine: engine && {
      command: values.engine!,
      timeoutMs: values["engine-timeout"] * 1000,
      name: engine.name,
      capabilities: engine.capabilities,
    },
    profile: engine && values.profile !== "strict" ? values.profile : undefined,
    pinned: values.pins !== undefined ? [...loadPins(values.pins).laws.keys()] : undefined,
    ...(values["eagle3-oracle"] ? { eagle3Oracle: true } : {}),
  };
}

/**
 * --require-laws N (at least N laws judged a case) or LAW,LAW (each of them did): a count no larger than the
 * laws selected, names of selected laws. Anything else is a UsageError naming the flag.
 */
export function parseRequireLaws(raw: string | undefined, selected: readonly string[]): LawRequirement | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^[+-]?\d+$/.test(text)) {
    const count = Number(text);
    if (!Number.isSafeInteger(count) || count < 1 || count > selected.length)
      throw new UsageError(
        `--require-laws must be a count from 1 to the ${selected.length} laws selected, or law names separated by commas, got '${raw}'`,
        "--require-laws",
      );
    return { count };
  }
  const names = text.split(",").map((name) => name.trim());
  if (names.some((name) => name === ""))
    throw new UsageError(
      `--require-laws must be a count or law names separated by commas, got '${raw}'`,
      "--require-laws",
    );
  const laws = names.map((name) => {
    const law = lawByName(name);
    if (!law)
      throw new UsageError(`--require-laws: unknown law '${name}' (known: ${LAW_NAMES.join(", ")})`, "--require-laws");
    if (!selected.includes(law.name))
      throw new UsageError(`--require-laws: '${law.name}' is not among the laws --law selected`, "--require-laws");
    return law.name;
  });
  return { laws: [...new Set(laws)] };
}
