// `specconf validate`: another engine's outputs (JSON Lines, streamed) and optionally traces, checked
// against a golden file. Bad input of any kind is an InputError (exit 2) raised before anything is
// written; otherwise the result is a report: per request and output check, and per trace and law,
// holds / fails (first divergence) / not checkable, plus the profile's relaxations and how often each
// was applied.
import { loadModels } from "../case/models.ts";
import type { RunResult } from "../trace/run-result.ts";
import type { LawResult } from "../laws/law.ts";
import { ReferenceOracle } from "../reference/oracle.ts";
import { loadGoldenFile, readDocument } from "../golden/load.ts";
import type { Golden, GoldenCase, GoldenRequest } from "../golden/schema.ts";
import { InputError } from "../schema/input-error.ts";
import { formatVersionIssue, validateAgainst } from "../schema/validator.ts";
import { parseTrace } from "../trace/load.ts";
import type { Trace } from "../trace/schema.ts";
import { readJsonLines } from "./jsonl.ts";
import { outputLineIssues, traceIssues } from "./input-checks.ts";
import { checkRequestOutput, missingOutput, type Epsilon } from "./output-checks.ts";
import { OUTPUTS_FORMAT_VERSION, OutputLineSchema, type OutputLine } from "../trace/outputs-line.ts";
import { RelaxationLog, type Profile } from "../profiles/profiles.ts";
import { checkLaws, type LawVerdict } from "../check/runner.ts";
import { goldenOracle, recordedSource } from "./recorded.ts";
import { RelaxedViews } from "../profiles/relaxed-view.ts";

export interface TraceInput {
  path: string;
  /** The golden case the trace belongs to; matched by its requests when absent. */
  caseName?: string;
}

export interface ValidateOptions {
  goldenPath: string;
  outputsPath: string;
  traces?: readonly TraceInput[];
  profile: Profile;
  /** Overrides the golden file's target epsilon (the draft epsilon scales with it); named in the report. */
  epsilon?: number;
  /** Validate only these golden cases (an engine that cannot run the others); lines of other cases are skipped. */
  cases?: readonly string[];
  maxLineBytes?: number;
}

export interface RequestReport {
  case: string;
  id: number;
  /** Line of the outputs file (absent: no line for this request). */
  line?: number;
  checks: LawResult[];
}

export interface TraceReport {
  case: string;
  file: string;
  laws: LawVerdict[];
}

export interface ValidationReport {
  golden: { file: string; suite: string; ortVersion: string; ep: string; dtype: string; threads: number };
  outputs: string;
  /** The golden cases validated (all unless --case narrowed them) and the lines skipped as belonging to others. */
  cases: string[];
  skippedLines: number;
  profile: { name: string; description: string; relaxations: ReturnType<RelaxationLog["entries"]> };
  epsilon: Epsilon & { fromGolden: boolean };
  requests: RequestReport[];
  traces: TraceReport[];
  summary: { holds: number; fails: number; notCheckable: number; ties: number };
  exitCode: 0 | 1;
}

function epsilonOf(golden: Golden, override: number | undefined): ValidationReport["epsilon"] {
  if (override === undefined) return { ...golden.epsilon, fromGolden: true };
  const scale = golden.epsilon.draft / golden.epsilon.target;
  return { target: override, draft: override * scale, fromGolden: false };
}

/** Parses one outputs line, checking version, schema, case and request id. */
function parseOutputLine(
  value: unknown,
  label: string,
  golden: Golden,
): { line: OutputLine; goldenCase: GoldenCase; request: GoldenRequest } {
  const version = formatVersionIssue(value, "outputs", OUTPUTS_FORMAT_VERSION);
  if (version) throw InputError.fromIssues(label, [version]);
  const result = validateAgainst<OutputLine>(OutputLineSchema, value, "outputs line");
  if (!result.ok) throw InputError.fromIssues(label, result.errors);
  const line = result.value;
  const goldenCase = golden.cases.find((candidate) => candidate.name === line.case);
  if (!goldenCase)
    throw new InputError(
      label,
      "/case",
      `no case '${line.case}' in the golden file (cases: ${golden.cases.map((c) => c.name).join(", ")})`,
    );
  const request = goldenCase.expected.requests.find((candidate) => candidate.id === line.id);
  if (!request)
    throw new InputError(
      label,
      "/id",
      `case '${line.case}' has no request ${line.id} (ids: ${goldenCase.expected.requests.map((r) => r.id).join(", ")})`,
    );
  const issues = outputLineIssues(line, goldenCase, golden.models.target.spec);
  if (issues.length > 0) throw InputError.fromIssues(label, issues);
  return { line, goldenCase, request };
}

/** Loads a trace and ties it to its golden case: requests must be the case's, digests the golden models'. */
function loadTraceFor(input: TraceInput, golden: Golden): { trace: Trace; goldenCase: GoldenCase } {
  const trace = parseTrace(readDocument(input.path), input.path);
  let goldenCase: GoldenCase | undefined;
  if (input.caseName !== undefined) {
    goldenCase = golden.cases.find((candidate) => candidate.name === input.caseName);
    if (!goldenCase)
      throw new InputError(
        input.path,
        undefined,
        `no case '${input.caseName}' in the golden file (cases: ${golden.cases.map((c) => c.name).join(", ")})`,
      );
  } else if (golden.cases.length === 1) {
    goldenCase = golden.cases[0];
  } else if (trace.requests && trace.requests.length > 0) {
    const key = (requests: readonly { id: number; prompt: readonly number[] }[]) =>
      JSON.stringify([...requests].sort((a, b) => a.id - b.id).map((r) => [r.id, r.prompt]));
    const traced = key(trace.requests);
    goldenCase = golden.cases.find((candidate) => key(candidate.case.workload.requests) === traced);
    if (!goldenCase)
      throw new InputError(
        input.path,
        "/requests",
        `match no golden case's workload: name the case with --trace CASE=${input.path}`,
      );
  } else {
    throw new InputError(
      input.path,
      undefined,
      `has no requests to match a golden case by: name the case with --trace CASE=${input.path}`,
    );
  }
  trace.requests?.forEach((request, i) => {
    const expected = goldenCase!.case.workload.requests.find((candidate) => candidate.id === request.id);
    if (!expected)
      throw new InputError(input.path, `/requests/${i}/id`, `case '${goldenCase!.name}' has no request ${request.id}`);
    if (expected.prompt.join(",") !== request.prompt.join(","))
      throw new InputError(
        input.path,
        `/requests/${i}/prompt`,
        `differs from the prompt of case '${goldenCase!.name}' request ${request.id}`,
      );
  });
  const issues = traceIssues(trace, goldenCase, golden.models.target.spec);
  if (issues.length > 0) throw InputError.fromIssues(input.path, issues);
  const models = trace.models;
  if (models && models.target !== golden.models.target.digest) {
    throw new InputError(
      input.path,
      "/models/target",
      `digest ${models.target.slice(0, 12)}... is not the golden target's ${golden.models.target.digest.slice(0, 12)}...`,
    );
  }
  const draftDigest = models?.draft?.[0];
  if (draftDigest !== undefined && draftDigest !== golden.models.draft?.digest) {
    throw new InputError(
      input.path,
      "/models/draft/0",
      `digest ${draftDigest.slice(0, 12)}... is not the golden draft's ${golden.models.draft?.digest.slice(0, 12) ?? "(none)"}`,
    );
  }
  return { trace, goldenCase };
}

/** Every law a recorded trace can show (the golden tokens as its target-only baseline). */
export async function runTraceLaws(
  trace: Trace,
  goldenCase: GoldenCase,
  oracle: ReferenceOracle,
  views: RelaxedViews,
): Promise<LawVerdict[]> {
  const check = await checkLaws(recordedSource(goldenCase, trace, oracle), goldenCase.case, { views });
  return check.results;
}

export function summarize(results: readonly LawResult[]): ValidationReport["summary"] {
  return {
    holds: results.filter((result) => result.status === "holds").length,
    fails: results.filter((result) => result.status === "fails").length,
    notCheckable: results.filter((result) => result.status === "not-checkable").length,
    ties: results.reduce((sum, result) => sum + result.ties, 0),
  };
}

/**
 * The validation of one golden file, fed line by line (so outputs are streamed), then finished with the
 * traces. Every InputError is raised before finish() returns a report.
 */
export class Validation {
  readonly epsilon: ValidationReport["epsilon"];
  readonly log: RelaxationLog;
  private readonly seen = new Map<string, number>();
  private readonly requests: RequestReport[] = [];
  private lines = 0;
  private skipped = 0;
  readonly cases: readonly GoldenCase[];

  constructor(
    readonly golden: Golden,
    readonly goldenFile: string,
    readonly profile: Profile,
    epsilon?: number,
    caseNames?: readonly string[],
  ) {
    this.epsilon = epsilonOf(golden, epsilon);
    this.log = new RelaxationLog(profile);
    for (const name of caseNames ?? []) {
      if (!golden.cases.some((goldenCase) => goldenCase.name === name))
        throw new InputError(
          goldenFile,
          "/cases",
          `has no case '${name}' (cases: ${golden.cases.map((c) => c.name).join(", ")})`,
        );
    }
    this.cases = caseNames?.length
      ? golden.cases.filter((goldenCase) => caseNames.includes(goldenCase.name))
      : golden.cases;
  }

  /** One outputs line (parsed JSON); `label` is FILE:LINE for errors. */
  addLine(value: unknown, label: string, line: number): void {
    this.lines += 1;
    const parsed = parseOutputLine(value, label, this.golden);
    if (!this.cases.includes(parsed.goldenCase)) {
      this.skipped += 1;
      return;
    }
    const key = `${parsed.line.case}\u0000${parsed.line.id}`;
    const earlier = this.seen.get(key);
    if (earlier !== undefined)
      throw new InputError(
        label,
        "/id",
        `duplicate request: case '${parsed.line.case}' id ${parsed.line.id} is already on line ${earlier}`,
      );
    this.seen.set(key, line);
    this.requests.push({
      case: parsed.goldenCase.name,
      id: parsed.line.id,
      line,
      checks: checkRequestOutput(parsed.request, parsed.line, this.epsilon, this.log),
    });
  }

  async finish(
    outputsLabel: string,
    traces: readonly { file: string; trace: Trace; goldenCase: GoldenCase }[],
  ): Promise<ValidationReport> {
    if (this.lines === 0) throw new InputError(outputsLabel, undefined, "has no output lines");
    const requests = [...this.requests];
    for (const goldenCase of this.cases) {
      for (const request of goldenCase.expected.requests) {
        if (!this.seen.has(`${goldenCase.name}\u0000${request.id}`))
          requests.push({ case: goldenCase.name, id: request.id, checks: missingOutput(request) });
      }
    }
    const caseOrder = new Map(this.golden.cases.map((goldenCase, i) => [goldenCase.name, i]));
    requests.sort((a, b) => caseOrder.get(a.case)! - caseOrder.get(b.case)! || a.id - b.id);

    const traceReports: TraceReport[] = [];
    let oracle: ReferenceOracle | undefined;
    const views = new RelaxedViews(this.profile, this.log);
    for (const { file, trace, goldenCase } of traces) {
      // One suite, one pair of models: one oracle serves every case.
      oracle ??= await goldenOracle(goldenCase, this.epsilon);
      traceReports.push({ case: goldenCase.name, file, laws: await runTraceLaws(trace, goldenCase, oracle, views) });
    }
    const all = [...requests.flatMap((request) => request.checks), ...traceReports.flatMap((report) => report.laws)];
    const summary = summarize(all);
    const { metadata } = this.golden;
    return {
      golden: {
        file: this.goldenFile,
        suite: this.golden.suite,
        ortVersion: metadata.ortVersion,
        ep: metadata.ep,
        dtype: metadata.dtype,
        threads: metadata.threads,
      },
      outputs: outputsLabel,
      cases: this.cases.map((goldenCase) => goldenCase.name),
      skippedLines: this.skipped,
      profile: { name: this.profile.name, description: this.profile.description, relaxations: this.log.entries() },
      epsilon: this.epsilon,
      requests,
      traces: traceReports,
      summary,
      exitCode: summary.fails > 0 ? 1 : 0,
    };
  }
}

export async function validate(options: ValidateOptions): Promise<ValidationReport> {
  const golden = loadGoldenFile(options.goldenPath);
  const validation = new Validation(golden, options.goldenPath, options.profile, options.epsilon, options.cases);
  const traces = (options.traces ?? []).map((input) => ({ file: input.path, ...loadTraceFor(input, golden) }));
  for await (const { value, label, line } of readJsonLines(options.outputsPath, { maxLineBytes: options.maxLineBytes }))
    validation.addLine(value, label, line);
  return validation.finish(options.outputsPath, traces);
}
