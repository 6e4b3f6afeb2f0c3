// Where the checked-in golden suites live: the package's own golden/ folder, found from this file, not
// from the working directory, so `check --engine`, `export` and `golden verify` work from any folder.
// Listing a folder that is missing or not a folder is bad input naming the flag.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { BadInputError } from "../errors/bad-input.ts";

const ABSOLUTE = fileURLToPath(new URL("../../golden", import.meta.url));

/** The package's golden folder, shown relative to the working directory when it is below it. */
export function packageGoldenDir(): string {
  const shown = relative(process.cwd(), ABSOLUTE);
  return shown === "" ? "." : shown.startsWith("..") ? ABSOLUTE : shown;
}

/** The *.json files of a golden folder, sorted; `flag` names the flag that chose the folder. */
export function goldenFilesIn(dir: string, flag: string): string[] {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new BadInputError(`${flag} ${dir}: not a folder`, { flag });
    names = readdirSync(dir);
  } catch (error) {
    if (error instanceof BadInputError) throw error;
    throw new BadInputError(
      `${flag} ${dir}: cannot read the golden folder (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      {
        flag,
      },
    );
  }
  const files = names
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => join(dir, name));
  if (files.length === 0) throw new BadInputError(`${flag} ${dir}: no golden files (*.json) there`, { flag });
  return files;
}
