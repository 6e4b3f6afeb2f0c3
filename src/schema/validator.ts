// One shared ajv instance (JSON Schema 2020-12, strict), compile-once caching per schema, and
// ajv's errors turned into plain issues: a JSON-pointer path and a short message.
//
// TypeBox 0.34 emits draft-07 tuples (`items: [..]` plus `additionalItems`), which the 2020-12
// meta-schema rejects (strict mode also rejects `additionalItems` as an unknown keyword). Instead of
// relaxing strict mode, each schema is translated to its 2020-12 equivalent before compiling:
// `items: [..]` becomes `prefixItems`, and `additionalItems` becomes `items`. TypeBox's [Kind] and
// [OptionalKind] markers are symbol keys; ajv never sees them (and the translated copy drops them).
import { Ajv2020 } from "ajv/dist/2020.js";
import type { AnySchema, ErrorObject, ValidateFunction } from "ajv";

export interface ValidationIssue {
  /** JSON pointer into the validated document ("" is the document itself). */
  path: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: ValidationIssue[] };

export const ajv = new Ajv2020({ allErrors: true, strict: true });

const compiled = new WeakMap<object, ValidateFunction>();

/** The compiled validator of `schema` (compiled once per schema object). */
export function compileSchema(schema: object, what = "schema"): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    try {
      validate = ajv.compile(toDraft2020(schema) as AnySchema);
    } catch (err) {
      throw new Error(`cannot compile the ${what} schema: ${(err as Error).message}`);
    }
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * Validates `data` against `schema`. `what` names the schema in compile errors (a bug, not an input
 * problem). Data is never modified (no defaults, no coercion).
 */
export function validateAgainst<T>(schema: object, data: unknown, what: string): ValidationResult<T> {
  const validate = compileSchema(schema, what);
  if (validate(data)) return { ok: true, value: data as T };
  return { ok: false, errors: issuesFromAjv(validate.errors ?? []) };
}

/**
 * The formatVersion issue of a parsed document, if any: a present but unsupported version. (A
 * missing formatVersion, or a document that is not an object, is left to the schema.)
 */
export function formatVersionIssue(data: unknown, kind: string, supported: number): ValidationIssue | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data) || !("formatVersion" in data)) return undefined;
  const version = (data as { formatVersion: unknown }).formatVersion;
  if (version === supported) return undefined;
  return {
    path: "/formatVersion",
    message: `unsupported ${kind} format version ${JSON.stringify(version)} (this specconf reads ${supported})`,
  };
}

/** `case.json: /engine/numSteps must be >= 1` */
export function formatIssue(file: string, issue: ValidationIssue): string {
  return `${file}: ${displayPath(issue.path)} ${issue.message}`;
}

/** A path for messages: the root is shown as "/". */
export function displayPath(path: string): string {
  return path === "" ? "/" : path;
}

/** Escapes one JSON-pointer reference token. */
export function pointerToken(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

// ---------------------------------------------------------------------------------------------
// Draft-07 tuple forms -> 2020-12, walking only schema positions (never const/enum/default values).

const SCHEMA_MAP_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
const SCHEMA_ARRAY_KEYWORDS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
const SCHEMA_KEYWORDS = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function toDraft2020(schema: unknown): unknown {
  if (!isPlainObject(schema)) return schema; // boolean schemas
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAP_KEYWORDS.has(key) && isPlainObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toDraft2020(v)]));
    } else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) {
      out[key] = value.map(toDraft2020);
    } else if (SCHEMA_KEYWORDS.has(key)) {
      out[key] = Array.isArray(value) ? value.map(toDraft2020) : toDraft2020(value);
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out.items)) {
    out.prefixItems = out.items;
    delete out.items;
    if ("additionalItems" in out) {
      out.items = out.additionalItems;
      delete out.additionalItems;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ajv errors -> issues. anyOf failures are resolved to one readable issue: when every branch
// rejects the value itself (type / const / enum), a merged "must be one of ..." message; otherwise
// the errors of the branch that matched best (fewest shape mismatches at the value itself).

interface Alternative {
  kind: "type" | "value";
  text: string;
}

interface RawIssue extends ValidationIssue {
  /** Set when the value itself was rejected (type, const, enum): what would have been accepted. */
  alternatives?: Alternative[];
  /** A required / additional-property issue on the object at `at`. */
  shallow?: boolean;
  /** The ajv instancePath the error was raised at. */
  at: string;
}

function belongsTo(error: ErrorObject, union: ErrorObject): boolean {
  if (error === union) return false;
  if (!error.schemaPath.startsWith(`${union.schemaPath}/`)) return false;
  return error.instancePath === union.instancePath || error.instancePath.startsWith(`${union.instancePath}/`);
}

function isUnion(error: ErrorObject): boolean {
  return (
    error.keyword === "anyOf" ||
    (error.keyword === "oneOf" && (error.params as { passingSchemas?: unknown }).passingSchemas == null)
  );
}

export function issuesFromAjv(errors: readonly ErrorObject[]): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const raw of simplify(errors)) {
    const key = `${raw.path}\u0000${raw.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ path: raw.path, message: raw.message });
  }
  return issues;
}

function simplify(errors: readonly ErrorObject[]): RawIssue[] {
  const unions = errors.filter(isUnion);
  const outer = unions.filter((u) => !unions.some((other) => belongsTo(u, other)));
  const out: RawIssue[] = [];
  for (const error of errors) {
    if (outer.includes(error)) {
      out.push(
        ...resolveUnion(
          error,
          errors.filter((e) => belongsTo(e, error)),
        ),
      );
    } else if (!outer.some((u) => belongsTo(error, u))) {
      out.push(toIssue(error));
    }
  }
  return out;
}

function resolveUnion(union: ErrorObject, members: ErrorObject[]): RawIssue[] {
  const prefix = `${union.schemaPath}/`;
  const byBranch = new Map<string, ErrorObject[]>();
  for (const error of members) {
    const branch = error.schemaPath.slice(prefix.length).split("/")[0];
    byBranch.set(branch, [...(byBranch.get(branch) ?? []), error]);
  }
  const branches = [...byBranch.values()].map(simplify);
  if (branches.length === 0) return [toIssue(union)];
  const at = union.instancePath;
  const rejectsValue = (issues: RawIssue[]) => issues.some((i) => i.at === at && i.alternatives !== undefined);
  if (branches.every(rejectsValue)) {
    const alternatives: Alternative[] = [];
    for (const issues of branches) {
      for (const issue of issues) {
        if (issue.at !== at || issue.alternatives === undefined) continue;
        for (const alt of issue.alternatives) {
          if (!alternatives.some((a) => a.kind === alt.kind && a.text === alt.text)) alternatives.push(alt);
        }
      }
    }
    return [{ path: at, at, message: mustBe(alternatives), alternatives }];
  }
  const score = (issues: RawIssue[]): number[] => [
    rejectsValue(issues) ? 1 : 0,
    issues.filter((i) => i.at === at && i.shallow).length,
    issues.length,
  ];
  let best = branches[0];
  let bestScore = score(best);
  for (const issues of branches.slice(1)) {
    const s = score(issues);
    const better = s.findIndex((v, k) => v !== bestScore[k]);
    if (better >= 0 && s[better] < bestScore[better]) {
      best = issues;
      bestScore = s;
    }
  }
  return best;
}

function mustBe(alternatives: Alternative[]): string {
  const texts = alternatives.map((a) => a.text);
  if (alternatives.every((a) => a.kind === "value")) {
    return texts.length === 1 ? `must be ${texts[0]}` : `must be one of ${texts.join(", ")}`;
  }
  return `must be ${texts.join(" or ")}`;
}

function showValue(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text;
}

function toIssue(error: ErrorObject): RawIssue {
  const at = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return {
        path: `${at}/${pointerToken(String(params.missingProperty))}`,
        at,
        message: "is required",
        shallow: true,
      };
    case "additionalProperties":
      return {
        path: `${at}/${pointerToken(String(params.additionalProperty))}`,
        at,
        message: "is not an allowed property",
        shallow: true,
      };
    case "type": {
      const types = String(params.type).split(",");
      const alternatives = types.map((t): Alternative => ({ kind: "type", text: t }));
      return { path: at, at, message: `must be ${types.join(" or ")}`, alternatives };
    }
    case "const": {
      const alternatives: Alternative[] = [{ kind: "value", text: showValue(params.allowedValue) }];
      return { path: at, at, message: mustBe(alternatives), alternatives };
    }
    case "enum": {
      const values = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      const alternatives = values.map((v): Alternative => ({ kind: "value", text: showValue(v) }));
      return { path: at, at, message: mustBe(alternatives), alternatives };
    }
    default:
      return { path: at, at, message: error.message ?? `fails ${error.keyword}` };
  }
}
