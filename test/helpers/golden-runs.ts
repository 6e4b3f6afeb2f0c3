// Shared by validate tests: a golden file, the reference engine's outputs and trace for one of its cases
// (optionally with faults), and a Validation over them.
import { loadGoldenFile } from "../../src/golden/load.ts";
import { runGoldenCase } from "../../src/adapter/reference-outputs.ts";
import type { Golden, GoldenCase } from "../../src/golden/schema.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { PROFILES, type Profile } from "../../src/profiles/profiles.ts";
import { Validation, type ValidationReport } from "../../src/validate/validate.ts";
import type { OutputLine } from "../../src/trace/outputs-line.ts";
import type { Trace } from "../../src/trace/schema.ts";

const goldens = new Map<string, Golden>();

export function golden(suite: string): Golden {
  let value = goldens.get(suite);
  if (!value) {
    value = loadGoldenFile(`golden/${suite}.json`);
    goldens.set(suite, value);
  }
  return value;
}

export function goldenCase(suite: string, name: string): GoldenCase {
  const found = golden(suite).cases.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no case ${suite}/${name}`);
  return found;
}

export async function validateRun(
  suite: string,
  name: string,
  lines: readonly OutputLine[],
  trace: Trace | undefined,
  profile: Profile = PROFILES.strict,
): Promise<ValidationReport> {
  const validation = new Validation(golden(suite), `golden/${suite}.json`, profile, undefined, [name]);
  lines.forEach((line, i) => validation.addLine(line, `outputs:${i + 1}`, i + 1));
  return validation.finish("outputs", trace ? [{ file: "trace", trace, goldenCase: goldenCase(suite, name) }] : []);
}

export async function reference(suite: string, name: string, faults: readonly FaultName[] = []) {
  return runGoldenCase(goldenCase(suite, name), faults);
}

export function failing(report: ValidationReport): { outputs: string[]; trace: string[] } {
  const outputs = new Set<string>();
  for (const request of report.requests)
    for (const check of request.checks) if (check.status === "fails") outputs.add(check.law);
  const trace = new Set<string>();
  for (const entry of report.traces) for (const law of entry.laws) if (law.status === "fails") trace.add(law.law);
  return { outputs: [...outputs].sort(), trace: [...trace].sort() };
}
