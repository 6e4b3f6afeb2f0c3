// `specconf check --engine "<command>"`: every law that can be judged from outputs and traces, run
// against an external engine over the protocol, on the golden suites' cases (each with its target-only
// baseline and the twin runs the multi-run laws need, all through the engine). Exit 0: every law holds;
// 1: a law fails; 2: the engine crashed, timed out or broke the protocol (one line saying which).
import type { Case } from "../case/case.ts";
import { goldenFilesIn, packageGoldenDir } from "../golden/golden-dir.ts";
import type { FaultName } from "../engine/faults.ts";
import { loadGoldenFile } from "../golden/load.ts";
import { InputError } from "../schema/input-error.ts";
import { PROFILES, type Profile } from "../validate/profiles.ts";
import type { TraceLawResult } from "../validate/trace-laws.ts";
import { checkExternalCase, type ExternalCaseCheck } from "./check-external.ts";
import { ExternalEngine, ExternalEngineError } from "./client.ts";

export interface EngineCheckOptions {
  goldenFiles?: readonly string[];
  goldenDir?: string;
  faults?: readonly FaultName[];
  timeoutMs?: number;
  profile?: Profile;
  json?: boolean;
  write?: (text: string) => void;
}

export const NOTHING_CHECKED =
  "nothing was checked (every case was skipped as unsupported or no law was checkable): that is not a pass";

export interface EngineCheckSummary {
  engine: string;
  ok: boolean;
  cases: { suite: string; case: string; skipped?: string; laws: TraceLawResult[] }[];
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

function line(check: ExternalCaseCheck, suite: string, name: string): string {
  if (check.skipped) return `${suite}/${name}: skipped (${check.skipped})\n`;
  const verdicts = check.results.map(
    (law) => `${law.law} ${law.status === "holds" ? "ok" : law.status === "fails" ? "FAILS" : "n/c"}`,
  );
  const failures = check.results
    .filter((law) => law.violation)
    .map((law) => `    ${law.law}: ${law.violation!.message}\n`);
  return `${suite}/${name}: ${verdicts.join(", ")}\n${failures.join("")}`;
}

/** Runs the check and returns the exit code; crashes, timeouts and protocol errors are exit 2. */
export async function checkEngine(
  command: string,
  options: EngineCheckOptions = {},
): Promise<{ code: number; summary?: EngineCheckSummary; error?: string }> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  let cases;
  try {
    cases = casesOf(options);
  } catch (error) {
    if (error instanceof InputError) return { code: 2, error: error.message };
    throw error;
  }
  const engine = ExternalEngine.start(command);
  const summary: EngineCheckSummary = { engine: command, ok: true, cases: [] };
  try {
    for (const { suite, name, testCase } of cases) {
      const check = await checkExternalCase(engine, testCase, {
        timeoutMs: options.timeoutMs ?? 60_000,
        profile: options.profile ?? PROFILES.strict,
      });
      summary.cases.push({
        suite,
        case: name,
        ...(check.skipped ? { skipped: check.skipped } : {}),
        laws: check.results,
      });
      if (check.results.some((law) => law.status === "fails")) summary.ok = false;
      if (!options.json) write(line(check, suite, name));
    }
  } catch (error) {
    if (error instanceof ExternalEngineError) return { code: 2, error: `engine ${error.kind}: ${error.message}` };
    throw error;
  } finally {
    await engine.close();
  }
  if (options.json) write(`${JSON.stringify(summary)}\n`);
  else write(`${summary.cases.length} cases through '${command}': ${summary.ok ? "every law holds" : "FAILED"}\n`);
  // Nothing checked is not a pass: every case skipped as unsupported, or no law checkable on any.
  if (summary.ok && !summary.cases.some((entry) => entry.laws.some((law) => law.status === "holds")))
    return { code: 1, summary, error: NOTHING_CHECKED };
  return { code: summary.ok ? 0 : 1, summary };
}
