// "Nothing checked" is never a pass: a command whose every law was not checkable (or every case skipped)
// exits 1 with one line saying so, instead of 0.
import { EXIT_FAILED, EXIT_OK } from "../errors/exit.ts";

/** 0 when at least one verdict holds; otherwise one line on stderr and exit 1. */
export function nothingChecked(
  command: string,
  statuses: readonly string[],
  what = "every law was not checkable",
  stderr: { write(text: string): unknown } = process.stderr,
): number {
  if (statuses.some((status) => status === "holds")) return EXIT_OK;
  stderr.write(`specconf ${command}: nothing was checked (${what}): that is not a pass\n`);
  return EXIT_FAILED;
}
