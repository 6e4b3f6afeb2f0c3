/**
 * A small typed flag parser over node's util.parseArgs (strict mode).
 *
 *   const FLAGS = defineFlags({
 *     steps: { type: "integer", min: 1, default: 100, description: "decode steps per request" },
 *     ep: { type: "choice", choices: ["cpu", "cuda"], default: "cpu", description: "execution provider" },
 *     seed: { type: "integer", description: "fast-check seed" },
 *     only: { type: "string", multiple: true, description: "run only these laws" },
 *     verbose: { type: "boolean", short: "v", description: "log progress" },
 *   });
 *   const { values, positionals, help } = parseFlags(FLAGS, argv);
 *   // values.steps: number, values.ep: "cpu" | "cuda", values.seed: number | undefined,
 *   // values.only: string[], values.verbose: boolean
 *
 * Flag names are the keys of the spec, spelled as on the command line (e.g. "max-new-tokens"),
 * and values are keyed the same way. `--help` / `-h` is always accepted (unless the spec defines
 * its own `help`) and reported as `help`; renderHelp(spec) gives the text to print.
 *
 * Every user error (unknown flag, missing value, bad integer, bad choice, stray positional) throws
 * a UsageError with a one-line message naming the flag. A value starting with '-' followed by a digit is
 * a (negative) value, so `--chunk -3` is reported as out of range, not as a missing value. `given` says
 * which flags were on the command line (defaults fill the rest), for flags that cannot be combined.
 * renderHelp fits HELP_WIDTH (100) columns.
 */
import { parseArgs } from "node:util";
import { BadInputError } from "../errors/bad-input.ts";

/** A bad flag or argument; the message names the flag (`flag` is undefined for positionals). */
export class UsageError extends BadInputError {
  constructor(message: string, flag?: string) {
    super(message, { flag });
    this.name = "UsageError";
  }
}

interface BaseFlag {
  description: string;
  /** One-letter alias, e.g. "v" for -v. */
  short?: string;
  /** Placeholder for the value in help text (default: "<n>" for integers, "<value>" for strings). */
  valueName?: string;
}

export interface StringFlag extends BaseFlag {
  type: "string";
  default?: string | readonly string[];
  multiple?: boolean;
}

export interface BooleanFlag extends BaseFlag {
  type: "boolean";
  default?: boolean;
}

export interface IntegerFlag extends BaseFlag {
  type: "integer";
  default?: number | readonly number[];
  multiple?: boolean;
  /** Inclusive bounds. */
  min?: number;
  max?: number;
}

export interface ChoiceFlag extends BaseFlag {
  type: "choice";
  choices: readonly string[];
  default?: string | readonly string[];
  multiple?: boolean;
}

export type FlagSpec = StringFlag | BooleanFlag | IntegerFlag | ChoiceFlag;
export type FlagsSpec = Record<string, FlagSpec>;

type ScalarOf<F> = F extends { type: "string" }
  ? string
  : F extends { type: "boolean" }
    ? boolean
    : F extends { type: "integer" }
      ? number
      : F extends { type: "choice"; choices: readonly (infer C)[] }
        ? C
        : never;

export type FlagValue<F> = F extends { type: "boolean" }
  ? boolean
  : F extends { multiple: true }
    ? ScalarOf<F>[]
    : F extends { default: string | number }
      ? ScalarOf<F>
      : ScalarOf<F> | undefined;

export type FlagValues<S extends FlagsSpec> = { -readonly [K in keyof S]: FlagValue<S[K]> };

export interface ParsedFlags<S extends FlagsSpec> {
  values: FlagValues<S>;
  positionals: string[];
  /** --help / -h was given (always false when the spec defines its own "help" flag). */
  help: boolean;
  /** The flags given on the command line (as spelled in the spec, without dashes). */
  given: ReadonlySet<string>;
}

export interface ParseOptions {
  /** Accept positional arguments (default false: a positional is a UsageError). */
  allowPositionals?: boolean;
}

/** Identity helper that keeps literal types (choices, defaults) of an inline spec. */
export function defineFlags<const S extends FlagsSpec>(spec: S): S {
  return spec;
}

function describeInteger(f: IntegerFlag): string {
  const { min, max } = f;
  if (min !== undefined && max !== undefined) return `an integer in [${min}, ${max}]`;
  if (min !== undefined) return `an integer >= ${min}`;
  if (max !== undefined) return `an integer <= ${max}`;
  return "an integer";
}

function parseInteger(name: string, f: IntegerFlag, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw.trim()))
    throw new UsageError(`--${name} must be ${describeInteger(f)}, got '${raw}'`, `--${name}`);
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || (f.min !== undefined && n < f.min) || (f.max !== undefined && n > f.max)) {
    throw new UsageError(`--${name} ${raw.trim()} is out of range: must be ${describeInteger(f)}`, `--${name}`);
  }
  return n;
}

function parseChoice(name: string, f: ChoiceFlag, raw: string): string {
  if (!f.choices.includes(raw)) {
    throw new UsageError(`--${name} must be one of ${f.choices.join(", ")}, got '${raw}'`, `--${name}`);
  }
  return raw;
}

function convert(name: string, f: FlagSpec, raw: string): string | number {
  switch (f.type) {
    case "integer":
      return parseInteger(name, f, raw);
    case "choice":
      return parseChoice(name, f, raw);
    default:
      return raw;
  }
}

function checkSpec(spec: FlagsSpec): void {
  const shorts = new Set<string>();
  for (const [name, f] of Object.entries(spec)) {
    if (name.startsWith("-") || /\s|=/.test(name) || name === "") {
      throw new Error(`flag spec: bad flag name '${name}'`);
    }
    if (f.short !== undefined) {
      if (f.short.length !== 1) throw new Error(`flag spec: --${name} short alias must be one character`);
      if (shorts.has(f.short)) throw new Error(`flag spec: duplicate short alias -${f.short}`);
      shorts.add(f.short);
    }
    if (f.type === "choice" && f.choices.length === 0) {
      throw new Error(`flag spec: --${name} has no choices`);
    }
    if (f.default !== undefined && f.type !== "boolean") {
      if (Array.isArray(f.default) && !f.multiple) {
        throw new Error(`flag spec: --${name} has a list default but is not multiple`);
      }
      const defaults = Array.isArray(f.default) ? f.default : [f.default];
      for (const d of defaults) {
        if (f.type === "choice" && !f.choices.includes(d as string)) {
          throw new Error(`flag spec: --${name} default '${d}' is not one of its choices`);
        }
        if (f.type === "integer") parseInteger(name, f, String(d));
      }
    }
  }
}

/** Turns a util.parseArgs error into a one-line UsageError naming the flag. */
function translateParseError(err: unknown, spec: FlagsSpec): UsageError {
  const e = err as { code?: string; message?: string };
  const message = String(e.message ?? err);
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  // Prefer the long spelling when node names both ("-s, --steps <value>").
  const flag = /--[^\s',=<]+/.exec(quoted)?.[0] ?? /-[^\s',=<]+/.exec(quoted)?.[0];
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return new UsageError(`unknown flag ${flag ?? quoted}`, flag ?? quoted);
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return new UsageError(`unexpected argument '${quoted}'`);
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE": {
      const name = flag?.replace(/^--/, "");
      const f = name !== undefined && Object.hasOwn(spec, name) ? spec[name] : undefined;
      if (f?.type === "boolean" || /does not take an argument/.test(message)) {
        return new UsageError(`${flag} does not take a value`, flag);
      }
      if (/ambiguous/.test(message)) {
        return new UsageError(
          `missing value for ${flag} (to pass a value starting with '-', write ${flag}=VALUE)`,
          flag,
        );
      }
      return new UsageError(`missing value for ${flag}`, flag);
    }
    default:
      return new UsageError(message.split("\n")[0], flag);
  }
}

/**
 * parseArgs reads `--seed -42` as a missing value followed by an unknown flag; for flags that take a
 * value, rewrite it to `--seed=-42` (`-s -42` to `-s-42`) before parsing, so the value is judged as one.
 */
function joinNegativeValues(spec: FlagsSpec, argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (next !== undefined && /^-\.?\d/.test(next)) {
      const long = arg.startsWith("--") ? arg.slice(2) : undefined;
      const short = /^-[^-]$/.test(arg) ? arg.slice(1) : undefined;
      const takesValue =
        (long !== undefined && Object.hasOwn(spec, long) && spec[long].type !== "boolean") ||
        (short !== undefined && Object.values(spec).some((f) => f.short === short && f.type !== "boolean"));
      if (takesValue) {
        out.push(long !== undefined ? `${arg}=${next}` : `${arg}${next}`);
        i++;
        continue;
      }
    }
    out.push(arg);
  }
  return out;
}

export function parseFlags<const S extends FlagsSpec>(
  spec: S,
  argv: readonly string[],
  options: ParseOptions = {},
): ParsedFlags<S> {
  checkSpec(spec);
  const ownHelp = Object.hasOwn(spec, "help");
  const parseOptions: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  for (const [name, f] of Object.entries(spec)) {
    parseOptions[name] = {
      type: f.type === "boolean" ? "boolean" : "string",
      ...(f.short !== undefined ? { short: f.short } : {}),
      ...(f.type !== "boolean" && f.multiple ? { multiple: true } : {}),
    };
  }
  if (!ownHelp) {
    const hTaken = Object.values(spec).some((f) => f.short === "h");
    parseOptions.help = { type: "boolean", ...(hTaken ? {} : { short: "h" }) };
  }

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(spec, argv),
      options: parseOptions,
      strict: true,
      allowPositionals: options.allowPositionals ?? false,
    });
  } catch (err) {
    throw translateParseError(err, spec);
  }

  const raw = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const values: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(spec)) {
    const given = raw[name];
    if (f.type === "boolean") {
      values[name] = given === undefined ? (f.default ?? false) : given === true;
    } else if (f.multiple) {
      if (given === undefined) {
        const d = f.default;
        values[name] = d === undefined ? [] : Array.isArray(d) ? [...d] : [d];
      } else {
        values[name] = (given as string[]).map((v) => convert(name, f, v));
      }
    } else if (given === undefined) {
      values[name] = f.default;
    } else {
      values[name] = convert(name, f, given as string);
    }
  }
  return {
    values: values as FlagValues<S>,
    positionals: parsed.positionals,
    help: !ownHelp && raw.help === true,
    given: new Set(Object.keys(spec).filter((name) => raw[name] !== undefined)),
  };
}

/** Refuses flags that would be silently ignored: `flags` (those given) cannot be combined with `because`. */
export function rejectCombined(given: ReadonlySet<string>, flags: readonly string[], because: string): void {
  const ignored = flags.find((name) => given.has(name));
  if (ignored !== undefined) throw new UsageError(`--${ignored} cannot be combined with ${because}`, `--${ignored}`);
}

export interface HelpOptions {
  /** First line, e.g. "specconf run [flags]" (rendered as "usage: ..."). */
  usage?: string;
  /** Paragraph printed after the usage line. */
  summary?: string;
}

/** Help text never needs a terminal wider than this. */
export const HELP_WIDTH = 100;
/** The flag column's width; a longer flag puts its description on the next line. */
const FLAG_COLUMN = 30;

/** Word-wraps `text` to `width` columns (a word longer than the width gets a line of its own). */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line !== "" && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line === "" ? word : `${line} ${word}`;
    }
    lines.push(line);
  }
  return lines;
}

function choiceList(f: ChoiceFlag): string {
  return `<${f.choices.join("|")}>`;
}

function flagColumn(name: string, f: FlagSpec): string {
  const short = f.short !== undefined ? `-${f.short}, ` : "    ";
  let value = "";
  if (f.type === "choice") value = ` ${choiceList(f).length <= 20 ? choiceList(f) : (f.valueName ?? "<name>")}`;
  else if (f.type === "integer") value = ` ${f.valueName ?? "<n>"}`;
  else if (f.type === "string") value = ` ${f.valueName ?? "<value>"}`;
  return `${short}--${name}${value}`;
}

function flagNotes(f: FlagSpec): string {
  const notes: string[] = [];
  if (f.type === "choice" && choiceList(f).length > 20) notes.push(`one of: ${f.choices.join(", ")}`);
  if (f.type === "integer" && (f.min !== undefined || f.max !== undefined)) {
    notes.push(describeInteger(f));
  }
  if (f.type !== "boolean" && f.multiple) notes.push("repeatable");
  if (f.default !== undefined && !(f.type === "boolean" && f.default === false)) {
    const d = Array.isArray(f.default) ? f.default.join(", ") : String(f.default);
    notes.push(`default: ${d}`);
  }
  return notes.length > 0 ? ` (${notes.join("; ")})` : "";
}

/** Renders --help text for a flag spec, HELP_WIDTH columns at most. */
export function renderHelp(spec: FlagsSpec, options: HelpOptions = {}): string {
  const rows: [string, string][] = Object.entries(spec).map(([name, f]) => [
    flagColumn(name, f),
    f.description + flagNotes(f),
  ]);
  if (!Object.hasOwn(spec, "help")) {
    const hTaken = Object.values(spec).some((f) => f.short === "h");
    rows.push([`${hTaken ? "    " : "-h, "}--help`, "show this help"]);
  }
  const width = Math.min(FLAG_COLUMN, Math.max(...rows.map(([left]) => left.length)));
  const indent = " ".repeat(2 + width + 2);
  const lines: string[] = [];
  if (options.usage !== undefined) lines.push(...wrapText(`usage: ${options.usage}`, HELP_WIDTH), "");
  if (options.summary !== undefined) lines.push(...wrapText(options.summary, HELP_WIDTH), "");
  lines.push("flags:");
  for (const [left, right] of rows) {
    const text = wrapText(right, HELP_WIDTH - indent.length);
    if (left.length <= width) lines.push(`  ${left.padEnd(width)}  ${text[0]}`);
    else lines.push(`  ${left}`, `${indent}${text[0]}`);
    for (const more of text.slice(1)) lines.push(`${indent}${more}`);
  }
  return lines.join("\n") + "\n";
}
