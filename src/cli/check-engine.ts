// `specconf check --engine "<command>" --golden`: the laws on the golden suites' fixed cases, run through
// an external engine (each with its target-only baseline and the twin runs the multi-run laws need, all
// through the engine: src/sources/external.ts). Exit 0: no law fails (the footer counts what held); 1: a law fails, a case failed to
// run, or nothing was checked; 2: bad input (golden files) or an engine that cannot start or handshake.
import type { Case } from "../case/case.ts";
import { join } from "node:path";
import { checkOutputPaths, writeOutputFiles } from "./output-paths.ts";
import { goldenFilesIn, packageGoldenDir } from "../golden/golden-dir.ts";
import type { FaultName } from "../case/faults.ts";
import { loadGoldenFile } from "../golden/load.ts";
import { InputError } from "../schema/input-error.ts";
import { PROFILES, type Profile } from "../profiles/profiles.ts";
import { checkLaws } from "../check/runner.ts";
import type { EngineCheckSummary } from "../report/summary.ts";
import { judgeLaws, rowsOfVerdicts } from "../report/judged.ts";
import { LAW_NAMES } from "../laws/registry.ts";
import { engineCaseText, engineGoldenFooter } from "../report/text.ts";
import { render } from "../report/reporters.ts";
import { EngineStartError, ExternalSource } from "../sources/external.ts";
import { RelaxationLog } from "../profiles/profiles.ts";
import { RelaxedViews } from "../profiles/relaxed-view.ts";
import type { RunResult } from "../trace/run-result.ts";
import { outputLinesOf } from "../adapter/reference-outputs.ts";
import type { OutputLine, ReportedOutput } from "../trace/outputs-line.ts";

export interface EngineCheckOptions {
  goldenFiles?: readonly string[];
  goldenDir?: string;
  faults?: readonly FaultName[];
  timeoutMs?: number;
  profile?: Profile;
  json?: boolean;
  /** Also write each suite's outputs as `<dir>/<suite>.jsonl` (for `specconf validate`). */
  outputsDir?: string;
  write?: (text: string) => void;
}

function casesOf(options: EngineCheckOptions): { suite: string; name: string; testCase: Case }[] {
  const files = options.goldenFiles?.length
    ? options.goldenFiles
    : goldenFilesIn(options.goldenDir ?? packageGoldenDir(), "--golden");
  return files.flatMap((file) => {
    const golden = loadGoldenFile(file);
    return golden.cases.map((goldenCase) => ({
      suite: golden.suite,
      name: goldenCase.name,
      testCase: { ...goldenCase.case, engine: { ...goldenCase.case.engine, faults: [...(options.faults ?? [])] } },
    }));
  });
}

/** What an engine reported per request, as an outputs line carries it. */
function engineOutputs(run: RunResult): ReportedOutput[] {
  return run.outputs.map((output) => ({
    id: output.id,
    tokens: output.tokens,
    finishReason: output.finishReason,
    ...(output.stopTokenId !== undefined ? { stopTokenId: output.stopTokenId } : {}),
    ...(output.finishedLength !== undefined ? { finishedLength: output.finishedLength } : {}),
    ...(output.logprobs ? { logprobs: output.logprobs } : {}),
    ...(output.acceptLens.length > 0 ? { acceptLens: output.acceptLens } : {}),
    ...(output.roundsIncludeFirstToken ? { roundsIncludeFirstToken: true } : {}),
  }));
}

/** Runs the check and returns the exit code; an engine that cannot start or handshake is exit 2. */
export async function checkEngine(
  command: string,
  options: EngineCheckOptions = {},
): Promise<{ code: number; summary?: EngineCheckSummary; error?: string }> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  let cases;
  let source: ExternalSource;
  try {
    cases = casesOf(options);
    if (options.outputsDir !== undefined)
      checkOutputPaths([{ flag: "--outputs", path: options.outputsDir, kind: "folder" }]);
    source = await ExternalSource.start(command, { timeoutMs: options.timeoutMs ?? 60_000 });
  } catch (error) {
    if (error instanceof InputError || error instanceof EngineStartError) return { code: 2, error: error.message };
    throw error;
  }
  const log = new RelaxationLog(options.profile ?? PROFILES.strict);
  const views = new RelaxedViews(log.profile, log);
  const summary: EngineCheckSummary = {
    engine: source.name,
    command,
    ok: true,
    checked: 0,
    cases: [],
    relaxations: [],
  };
  const lines = new Map<string, OutputLine[]>();
  try {
    for (const { suite, name, testCase } of cases) {
      const check = await checkLaws(source, testCase, { views });
      if (check.run) lines.set(suite, [...(lines.get(suite) ?? []), ...outputLinesOf(name, engineOutputs(check.run))]);
      const entry = { suite, case: name, ...(check.skipped ? { skipped: check.skipped } : {}), laws: check.results };
      summary.cases.push(entry);
      if (check.results.some((law) => law.status === "fails")) summary.ok = false;
      summary.checked! += check.results.filter((law) => law.status !== "not-checkable").length;
      // Each case's verdicts as they come; the footer once all are in.
      if (!options.json) write(engineCaseText(entry));
    }
  } finally {
    await source.close();
  }
  summary.relaxations = log.entries();
  if (options.outputsDir !== undefined) {
    const dir = options.outputsDir;
    // Every suite's file or none (the folder was checked before the engine started).
    writeOutputFiles(
      "--outputs",
      [...lines].map(([suite, suiteLines]) => ({
        path: join(dir, `${suite}.jsonl`),
        text: suiteLines.map((line) => JSON.stringify(line)).join("\n") + "\n",
      })),
    );
  }
  // Nothing checked is not a pass: every case skipped, or every law not checkable.
  if (summary.checked === 0) summary.ok = false;
  summary.judged = judgeLaws({
    selected: LAW_NAMES,
    laws: rowsOfVerdicts(summary.cases),
    notRun: [],
    cases: summary.cases.filter((entry) => entry.skipped === undefined).length,
    caseKind: "golden",
  });
  write(options.json ? render({ command: "check --engine --golden", summary }, "json") : engineGoldenFooter(summary));
  return { code: summary.ok ? 0 : 1, summary };
}
