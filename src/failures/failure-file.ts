// Shrunk failures on disk, one record per failing law: `.specconf/failures/LAW.PROPERTY.FAULTS[.ENGINE].seedS.json`
// (the record: law, violation, seed, path, the laws checked and how, and the whole case, so `specconf
// replay FILE` needs nothing else), next to it the case alone (`.case.json`, for `specconf run --case`),
// the case's trace (`.trace.json`) and, for an external engine, the reference engine's trace
// (`.reference-trace.json`). The name holds everything that tells two failures apart (law, property,
// faults, engine, seed), and a record is never overwritten: a rerun that finds the same failure again
// writes `...-2.json`. Everything is schema-validated before it is written, and the files are written
// together, all or none. Reading them back (what `replay` accepts) is replay-input.ts.
import { Type, type Static } from "@sinclair/typebox";
import { join, relative } from "node:path";
import { CaseSchema, type Case } from "../case/case.ts";
import { validateCase } from "../case/load.ts";
import { RUNS_TO_COMPLETION } from "../check/runner.ts";
import { LAW_NAMES } from "../laws/registry.ts";
import { stableJson, writeFilesAtomic } from "../schema/atomic-write.ts";
import { formatVersionIssue, validateAgainst, type ValidationIssue } from "../schema/validator.ts";
import { validateTrace } from "../trace/load.ts";
import type { Trace } from "../trace/schema.ts";

export const FAILURE_FORMAT_VERSION = 1;
export const DEFAULT_FAILURE_DIR = ".specconf/failures";

const ViolationSchema = Type.Object(
  {
    message: Type.String(),
    request: Type.Optional(Type.Integer()),
    event: Type.Optional(Type.Integer()),
    index: Type.Optional(Type.Integer()),
    expected: Type.Optional(Type.Number()),
    got: Type.Optional(Type.Number()),
    margin: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const FailureRecordSchema = Type.Object(
  {
    formatVersion: Type.Literal(FAILURE_FORMAT_VERSION),
    kind: Type.Literal("specconf-failure"),
    /** The property (named after the law it focuses on) whose run failed. */
    property: Type.String(),
    /** The law this record is about, then the other laws failing on the same case. */
    laws: Type.Array(Type.String(), { minItems: 1 }),
    violation: ViolationSchema,
    /** fast-check seed and counterexample path: `fc.check(property, { seed, path, endOnFailure: true })`. */
    seed: Type.Integer(),
    path: Type.String(),
    faults: Type.Array(Type.String()),
    case: CaseSchema,
    /** The laws that were checked (absent: every law) and how twins were used: replay checks the same way. */
    checked: Type.Optional(Type.Array(Type.String())),
    twins: Type.Optional(Type.Union([Type.Literal("combined"), Type.Literal("separate")])),
    /** Sibling files in the record's own folder (plain file names; no trace when the run itself failed). */
    caseFile: Type.String(),
    traceFile: Type.Optional(Type.String()),
    /** The external engine the failure was found on (`specconf check --engine`); replay reruns it there. */
    engine: Type.Optional(
      Type.Object({ command: Type.String(), name: Type.String() }, { additionalProperties: false }),
    ),
    /** The reference engine's trace of the same case, for the side-by-side replay (external engines only). */
    referenceTraceFile: Type.Optional(Type.String()),
    /**
     * An invariance law's record (issue 25): the twin run the case's run was compared with, its trace beside the
     * record, so both runs can be shown (replay says which of them diverged from the reference).
     */
    twin: Type.Optional(
      Type.Object(
        { kind: Type.String(), describe: Type.String(), traceFile: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    /**
     * Why a trace the run produced is not stored beside the record: it failed the trace schema (a non-finite
     * number, which JSON cannot hold, say). The record and case are written all the same (issue 23).
     */
    traceOmitted: Type.Optional(Type.String()),
    replay: Type.String(),
  },
  { additionalProperties: false },
);

export type FailureRecord = Static<typeof FailureRecordSchema>;

export interface FailureInput {
  property: string;
  /** The failing laws, the one this record is about first. */
  laws: string[];
  violation: FailureRecord["violation"];
  seed: number;
  path: string;
  testCase: Case;
  /** Absent when the run itself failed (crash, timeout, protocol error). */
  trace?: Trace;
  checked?: readonly string[];
  twins?: "combined" | "separate";
  engine?: { command: string; name: string };
  /** The reference engine's trace of the case (external engines). */
  referenceTrace?: Trace;
  /** An invariance law's twin run (its kind, how messages name it, its trace). */
  twin?: { kind: string; describe: string; trace?: Trace };
}

/** What a record's `laws` may name: the registry's laws, an engine crash, the model-based suite. */
export const RECORD_LAWS: readonly string[] = [...LAW_NAMES, RUNS_TO_COMPLETION, "model-based"];

/** A sibling file name: no folder part, nothing hidden, so a crafted record cannot point outside its folder. */
const SIBLING = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

function issueText(what: string, issues: readonly ValidationIssue[]): string {
  return `${what} fails its schema: ${issues
    .slice(0, 3)
    .map((issue) => `${issue.path || "/"} ${issue.message}`)
    .join("; ")}`;
}

/** The name stem of a record: law, property, faults, engine (external) and seed, each reduced to [a-z0-9-]. */
export function failureStem(input: Pick<FailureInput, "property" | "laws" | "seed" | "testCase" | "engine">): string {
  const faults = input.testCase.engine.faults.map(slug).sort().join("+") || "no-fault";
  const engine = input.engine ? [slug(input.engine.name) || "engine"] : [];
  return [slug(input.laws[0]), slug(input.property), faults, ...engine, `seed${input.seed}`].join(".");
}

/**
 * Writes the record, the case and the trace (never over an existing record: the next free `-N` name);
 * returns the record's path and the one-line replay command.
 */
export function writeFailure(input: FailureInput, dir = DEFAULT_FAILURE_DIR): { file: string; replay: string } {
  const caseIssues = validateCase(input.testCase);
  if (caseIssues.length > 0) throw new Error(issueText("the shrunk case", caseIssues));
  // A trace that fails its schema is left out, with the reason in the record: the failure is still recorded
  // (a trace with a NaN or an infinity cannot be written as JSON, and losing the record hides the finding).
  const omitted: string[] = [];
  const storable = (what: string, trace: Trace | undefined): Trace | undefined => {
    const traceIssues = trace ? validateTrace(trace) : [];
    if (traceIssues.length === 0) return trace;
    omitted.push(issueText(what, traceIssues));
    return undefined;
  };
  input = {
    ...input,
    trace: storable("the shrunk case's trace", input.trace),
    referenceTrace: storable("the reference trace", input.referenceTrace),
    ...(input.twin ? { twin: { ...input.twin, trace: storable("the twin's trace", input.twin.trace) } } : {}),
  };
  const base = failureStem(input);
  for (let attempt = 1; ; attempt++) {
    const stem = attempt === 1 ? base : `${base}-${attempt}`;
    const file = join(dir, `${stem}.json`);
    const shown = relative(process.cwd(), file) || file;
    const replay = `npx specconf replay ${/[\s'"$`\\]/.test(shown) ? JSON.stringify(shown) : shown}${input.engine ? ` --engine ${JSON.stringify(input.engine.command)}` : ""}`;
    const record: FailureRecord = {
      formatVersion: FAILURE_FORMAT_VERSION,
      kind: "specconf-failure",
      property: input.property,
      laws: input.laws,
      violation: stripUndefined(input.violation),
      seed: input.seed,
      path: input.path,
      faults: [...input.testCase.engine.faults],
      case: input.testCase,
      ...(input.checked ? { checked: [...input.checked] } : {}),
      ...(input.twins ? { twins: input.twins } : {}),
      caseFile: `${stem}.case.json`,
      ...(input.trace ? { traceFile: `${stem}.trace.json` } : {}),
      ...(input.engine ? { engine: input.engine } : {}),
      ...(input.referenceTrace ? { referenceTraceFile: `${stem}.reference-trace.json` } : {}),
      ...(input.twin
        ? {
            twin: {
              kind: input.twin.kind,
              describe: input.twin.describe,
              ...(input.twin.trace ? { traceFile: `${stem}.twin-trace.json` } : {}),
            },
          }
        : {}),
      ...(omitted.length > 0 ? { traceOmitted: omitted.join("; ") } : {}),
      replay,
    };
    const issues = validateFailureRecord(record);
    if (issues.length > 0) throw new Error(issueText("the failure record", issues));
    try {
      // One set, the record last: a reader that sees the record sees its siblings too.
      writeFilesAtomic(
        [
          { path: join(dir, record.caseFile), text: stableJson(input.testCase) },
          ...(input.trace && record.traceFile
            ? [{ path: join(dir, record.traceFile), text: stableJson(input.trace) }]
            : []),
          ...(input.referenceTrace && record.referenceTraceFile
            ? [{ path: join(dir, record.referenceTraceFile), text: stableJson(input.referenceTrace) }]
            : []),
          ...(input.twin?.trace && record.twin?.traceFile
            ? [{ path: join(dir, record.twin.traceFile), text: stableJson(input.twin.trace) }]
            : []),
          { path: file, text: stableJson(record) },
        ],
        { exclusive: true },
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    return { file, replay };
  }
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function validateFailureRecord(data: unknown): ValidationIssue[] {
  const version = formatVersionIssue(data, "failure record", FAILURE_FORMAT_VERSION);
  if (version) return [version];
  const result = validateAgainst<FailureRecord>(FailureRecordSchema, data, "failure record");
  if (!result.ok) return result.errors;
  const record = result.value;
  const issues: ValidationIssue[] = [];
  record.laws.forEach((law, i) => {
    if (!RECORD_LAWS.includes(law))
      issues.push({ path: `/laws/${i}`, message: `unknown law '${law}' (known: ${RECORD_LAWS.join(", ")})` });
  });
  (record.checked ?? []).forEach((law, i) => {
    if (!LAW_NAMES.includes(law)) issues.push({ path: `/checked/${i}`, message: `unknown law '${law}'` });
  });
  for (const key of ["caseFile", "traceFile", "referenceTraceFile"] as const) {
    const name = record[key];
    if (name !== undefined && !SIBLING.test(name))
      issues.push({
        path: `/${key}`,
        message: `must be a plain file name in the record's own folder (letters, digits, '.', '_', '+', '-'), got ${JSON.stringify(name)}`,
      });
  }
  const twinFile = record.twin?.traceFile;
  if (twinFile !== undefined && !SIBLING.test(twinFile))
    issues.push({
      path: "/twin/traceFile",
      message: `must be a plain file name in the record's own folder, got ${JSON.stringify(twinFile)}`,
    });
  return issues;
}
