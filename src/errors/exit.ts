// The one mapping from an error to what a command prints and returns, used by every command:
// bad input (BadInputError and its subclasses) is exit 2 and one line naming the place; an interrupt is
// 130 (SIGINT) or 143 (SIGTERM) and one line; anything else is a bug in specconf: exit 1 with its stack.
import { BadInputError } from "./bad-input.ts";

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_SIGNAL: Readonly<Record<"SIGINT" | "SIGTERM", number>> = { SIGINT: 130, SIGTERM: 143 };

/** The longest message printed; a longer one (a huge value quoted back) is cut, the place comes first. */
const MAX_MESSAGE = 1000;

/** One printable line: control characters escaped (a value quoted back may hold newlines), long text cut. */
export function oneLine(text: string): string {
  const escaped = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => JSON.stringify(c).slice(1, -1));
  return escaped.length > MAX_MESSAGE ? `${escaped.slice(0, MAX_MESSAGE)}...` : escaped;
}

export interface ErrorReport {
  code: number;
  /** What goes to stderr, newline-terminated. */
  text: string;
}

export function describeError(command: string, error: unknown): ErrorReport {
  const prefix = command ? `specconf ${command}` : "specconf";
  if (error instanceof BadInputError) return { code: EXIT_BAD_INPUT, text: `${prefix}: ${oneLine(error.message)}\n` };
  const stack = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return {
    code: EXIT_FAILED,
    text: `${prefix}: internal error (a bug in specconf: please report it with the command line)\n${stack}\n`,
  };
}

/** Writes the error's report to stderr and returns its exit code. */
export function reportError(
  command: string,
  error: unknown,
  stderr: { write(text: string): unknown } = process.stderr,
): number {
  const report = describeError(command, error);
  stderr.write(report.text);
  return report.code;
}

/** Runs a command's body and maps whatever it throws: what every command's entry point returns. */
export async function runCommandBody(command: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    return reportError(command, error);
  }
}
