// `specconf check`: runs the laws' properties (each a generator focused on one law's corner, every run
// checked by every selected law), with progress, then reports through the report module (src/report/:
// a table per law, coverage labels, and for each failure the shrunk case written under .specconf/failures
// with its one-line replay command; --json, --junit). The verdict's policy is src/report/check-summary.ts.
import type { FaultName } from "../case/faults.ts";
import { runCommandBody } from "../errors/exit.ts";
import { DEFAULT_RUNTIME, type ExecutionProvider } from "../runtime/ort.ts";
import { buildTarget } from "../model/build.ts";
import { DEFAULT_PRESET, getPreset } from "../model/presets.ts";
import { sessionFor } from "../runtime/sessions.ts";
import { LAW_NAMES } from "../laws/registry.ts";
import { ExternalSource } from "../sources/external.ts";
import { narrowSpace } from "../properties/arbitraries/capabilities.ts";
import { runSuite, type SuiteOptions, type SuiteResult } from "../properties/suite.ts";
import { runSuiteOnWorkers } from "../properties/suite-workers.ts";
import { workerCommand } from "../properties/suite-job.ts";
import type { ChunkRecord } from "../properties/chunks.ts";
import { dimensionProperties, LAW_PROPERTIES, oracleProperty, propertyFor } from "../properties/law-properties.ts";
import { PROFILES, RelaxationLog } from "../profiles/profiles.ts";
import { RelaxedViews } from "../profiles/relaxed-view.ts";
import { loadPins } from "../failures/pins.ts";
import { summarizeCheck } from "../report/check-summary.ts";
import { render } from "../report/reporters.ts";
import { attachDivergences, checkFailureViews } from "../report/failure-view.ts";
import { checkEngine } from "./check-engine.ts";
import {
  CHECK_FLAGS,
  parseRequireLaws,
  parseShard,
  rejectIgnoredFlags,
  resolveLaws,
  resolveProperties,
  seedFromEnvironment,
  suiteJob,
} from "./check-flags.ts";
import { parseFlags, rejectCombined, renderHelp, UsageError } from "./args.ts";
import { checkOutputPaths, writeOutputFile, type OutputPath } from "./output-paths.ts";
import { createProgress } from "./progress.ts";

export function checkCommand(argv: string[]): Promise<number> {
  return runCommandBody("check", () => check(argv));
}

async function check(argv: string[]): Promise<number> {
  let source: ExternalSource | undefined;
  try {
    const { values, help, given } = parseFlags(CHECK_FLAGS, argv);
    if (help) {
      process.stdout.write(
        renderHelp(CHECK_FLAGS, {
          usage: "specconf check [flags]",
          summary:
            "Run the laws' property suites on generated cases; exit 0 no law failed (the last line counts the laws that held, never checkable, with no applicable case), 1 a law failed or --require-laws not met, 2 bad input.",
        }),
      );
      return 0;
    }
    rejectIgnoredFlags(values, given);
    if (values.engine !== undefined && values.golden) {
      const external = await checkEngine(values.engine, {
        goldenFiles: values["golden-file"],
        faults: values.fault as FaultName[],
        timeoutMs: values["engine-timeout"] * 1000,
        profile: PROFILES[values.profile],
        json: values.json,
        outputsDir: values.outputs,
      });
      if (external.error)
        process.stderr.write(`specconf check: --engine ${JSON.stringify(values.engine)}: ${external.error}\n`);
      return external.code;
    }
    const selected = values.law.length > 0 ? resolveLaws(values.law) : [...LAW_NAMES];
    const selectedSet = new Set(selected);
    const required = parseRequireLaws(values["require-laws"], selected);
    if (values.property.length > 0) rejectCombined(given, ["law"], "--property (every law checks its runs)");
    const suites = values.property.length > 0 ? new Set(resolveProperties(values.property)) : selectedSet;
    // A check of every law also runs the properties of case dimensions (law-properties.ts): every law checks them.
    const everything = values.property.length === 0 && values.law.length === 0;
    const properties = LAW_PROPERTIES.filter(
      (property) => suites.has(property.law) || (everything && dimensionProperties().includes(property)),
    ).map((property) => oracleProperty(property, values["eagle3-oracle"]));
    for (const name of values.property.length > 0 ? suites : selected)
      if (!propertyFor(name))
        throw new UsageError(
          `${values.property.length > 0 ? "--property" : "--law"}: '${name}' has no property suite yet`,
          values.property.length > 0 ? "--property" : "--law",
        );
    const outputs: OutputPath[] = [];
    if (values.junit !== undefined) outputs.push({ flag: "--junit", path: values.junit, kind: "file" });
    if (values.html !== undefined) outputs.push({ flag: "--html", path: values.html, kind: "file" });
    if (!values["no-write"]) outputs.push({ flag: "--failures", path: values.failures, kind: "folder" });
    checkOutputPaths(outputs);
    await preflightProvider(values.ep);
    const seed = seedFromEnvironment(values.seed);
    const faults = values.fault as FaultName[];
    const lawFilter = values.law.length > 0 ? selectedSet : undefined;
    if (values.engine !== undefined) {
      source = await ExternalSource.start(workerCommand(values.engine, 0), {
        timeoutMs: values["engine-timeout"] * 1000,
        onRestart: (reason) => progress.log(`  engine restarted after ${reason.split("\n")[0].slice(0, 160)}`),
      });
    }
    // Over workers each starts its own engine (`{worker}`: its index); this one only said what it can do.
    const shard = parseShard(values.shard);
    const onWorkers = values.workers > 1 || shard !== undefined;
    const engine = source && {
      command: source.command,
      name: source.name,
      restarts: source.restarts,
      capabilities: source.capabilities,
    };
    if (onWorkers) await source?.close();
    const capabilities = source?.capabilities;
    const pins = values.pins !== undefined ? loadPins(values.pins).laws : undefined;
    const relaxations = new RelaxationLog(PROFILES[values.profile]);
    process.stderr.write(
      `specconf check: seed ${seed} (replay: --seed ${seed} or SPECCONF_SEED=${seed}), ${values.runs} runs per law, ${properties.length} propert${properties.length === 1 ? "y" : "ies"}, ${source ? `engine ${source.name}` : `EP ${values.ep}`}${faults.length ? `, faults ${faults.join(", ")}` : ""}\n`,
    );

    const progress = createProgress({
      label: "check",
      total: values.runs * properties.length,
      enabled: !values.json,
      unit: "runs",
    });
    let done = 0;
    let suite: SuiteResult;
    let chunks: ChunkRecord[] = [];
    try {
      const options: SuiteOptions = {
        properties,
        runs: values.runs,
        seed,
        faults,
        ep: values.ep,
        laws: lawFilter,
        shrinkSeconds: values["shrink-seconds"],
        twins: values.twins as "combined" | "separate",
        failureDir: values["no-write"] ? false : values.failures,
        source,
        engine: source && { command: source.command, name: source.name },
        pinned: pins && new Set(pins.keys()),
        views:
          source && values.profile !== "strict" ? new RelaxedViews(PROFILES[values.profile], relaxations) : undefined,
        narrow: capabilities && ((space) => narrowSpace(space, capabilities)),
        onRun: () => progress.update(++done),
        onShrink: (law, attempt) => {
          if (attempt % 10 === 0) progress.log(`  shrinking '${law}': ${attempt} attempts`);
        },
        log: (line) => progress.log(line),
      };
      if (!onWorkers) suite = await runSuite(options);
      else {
        const job = suiteJob(values, seed, engine, selectedSet);
        const onRestarts = (count: number) => (engine!.restarts += count);
        ({ suite, chunks } = await runSuiteOnWorkers({ ...options, workers: values.workers, shard, job, onRestarts }));
      }
    } finally {
      progress.finish();
    }
    const summary = summarizeCheck({
      seed,
      selected,
      lawFilter: lawFilter !== undefined,
      suite,
      engine: engine && { ...engine, restarts: onWorkers ? engine.restarts : source!.restarts },
      pins,
      relaxations,
      shard: shard && { ...shard, runs: values.runs, properties: properties.map((p) => p.law), chunks },
      required,
    });
    // An invariance failure's record says which run diverged from the reference (the case's or its twin).
    await attachDivergences(summary);
    const report = { command: "check", summary } as const;
    if (values.junit) writeOutputFile("--junit", values.junit, render(report, "junit"));
    if (values.html)
      writeOutputFile("--html", values.html, render({ ...report, failures: await checkFailureViews(summary) }, "html"));
    process.stdout.write(render(report, values.json ? "json" : "text"));
    return summary.ok ? 0 : 1;
  } finally {
    await source?.close();
  }
}

/** A missing GPU provider is bad input (exit 2 with the fix), not a law failure in every run. */
export async function preflightProvider(ep: ExecutionProvider): Promise<void> {
  if (ep === "cpu") return;
  const spec = getPreset(DEFAULT_PRESET);
  const target = buildTarget(spec);
  await sessionFor(target.graph.bytes, target.graph.digest, spec, { ...DEFAULT_RUNTIME, ep });
}
