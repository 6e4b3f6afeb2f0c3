// InputError: a problem with a file the user gave us (missing, not JSON, wrong version, fails its
// schema), a BadInputError (exit 2). The message is one line: `FILE: PATH: what is wrong`
// (or `FILE: what is wrong` when the problem is the file as a whole, not a place in it).
import { readFileSync } from "node:fs";
import { BadInputError } from "../errors/bad-input.ts";
import type { ValidationIssue } from "./validator.ts";

export class InputError extends BadInputError {
  declare file: string;
  /** All schema issues found, when the error comes from schema validation (the message names the first). */
  readonly issues: readonly ValidationIssue[];

  constructor(
    file: string,
    path: string | undefined,
    detail: string,
    options: { issues?: readonly ValidationIssue[]; cause?: unknown } = {},
  ) {
    super(detail, { file, jsonPath: path }, { cause: options.cause });
    this.name = "InputError";
    this.issues = options.issues ?? [];
  }

  /** JSON pointer of the offending value ("" = the document); undefined for file-level problems. */
  get path(): string | undefined {
    return this.jsonPath;
  }

  static fromIssues(file: string, issues: readonly ValidationIssue[]): InputError {
    const first = issues[0] ?? { path: "", message: "is invalid" };
    return new InputError(file, first.path, first.message, { issues });
  }
}

/** Reads a file as UTF-8 text; a missing or unreadable file is an InputError naming it. */
export function readInputFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const detail =
      code === "ENOENT"
        ? "file not found"
        : code === "EISDIR"
          ? "is a directory, not a file"
          : code === "EACCES"
            ? "permission denied"
            : `cannot read: ${(err as Error).message}`;
    throw new InputError(path, undefined, detail, { cause: err });
  }
}

/** A line and column (both 1-based) of a character offset in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/** Parses JSON text; a syntax error becomes an InputError with line and column where obtainable. */
export function parseJsonText(text: string, file: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const where = syntaxErrorLocation(err.message, body);
    // V8 quotes (part of) the text in some messages; keep only the description.
    const reason = err.message
      .replace(/,\s*"[\s\S]*" is not valid JSON$/, "")
      .replace(/\s*in JSON at position \d+(\s*\(line \d+ column \d+\))?/, "")
      .replace(/\s+/g, " ")
      .trim();
    const at = where === undefined ? "" : ` at line ${where.line} column ${where.column}`;
    throw new InputError(file, undefined, `invalid JSON${at}: ${reason}`, { cause: err });
  }
}

function syntaxErrorLocation(message: string, text: string): { line: number; column: number } | undefined {
  const lc = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /at position (\d+)/.exec(message);
  if (pos) return lineColumn(text, Number(pos[1]));
  if (/Unexpected end of JSON input/.test(message)) return lineColumn(text, text.length);
  const offset = firstJsonErrorOffset(text);
  return offset === undefined ? undefined : lineColumn(text, offset);
}

/**
 * The offset of the first syntax error in `text` (undefined if it finds none): a small JSON scanner
 * used only when the SyntaxError message carries no position (e.g. V8's "Unexpected token" form).
 */
export function firstJsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  class Stop {
    constructor(readonly at: number) {}
  }
  const fail = (): never => {
    throw new Stop(i);
  };
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail();
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === "u") {
          i++;
          for (let k = 0; k < 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail();
            i++;
          }
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) {
          i++;
        } else {
          fail();
        }
      } else {
        i++;
      }
    }
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === "" || m[0] === "-") fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail();
      }
    } else if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail();
      }
    } else if (c === '"') {
      string();
    } else if (c === "t") {
      literal("true");
    } else if (c === "f") {
      literal("false");
    } else if (c === "n") {
      literal("null");
    } else {
      number();
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return err.at;
    return undefined; // e.g. nesting too deep for the stack: no position rather than a crash
  }
}
