// Checked-in kills (src/properties/kills.json): for each fault, the seed and counterexample path at which
// the mixed property (the whole case space, every law) fails with that fault on, and the shrunk case
// itself. CI replays each in seconds (test/laws/kills.test.ts); `specconf mutants --update-kills`
// rewrites the file after a full search.
import { Type, type Static } from "@sinclair/typebox";
import { CaseSchema } from "../case/case.ts";
import { writeJsonAtomic } from "../schema/atomic-write.ts";
import { InputError, parseJsonText, readInputFile } from "../schema/input-error.ts";
import { validateAgainst } from "../schema/validator.ts";

export const KILLS_FILE = "src/properties/kills.json";

export const KillSchema = Type.Object(
  {
    fault: Type.String(),
    /** The property run (its name) and the law failing on the shrunk case first, then all of them. */
    property: Type.String(),
    law: Type.String(),
    laws: Type.Array(Type.String()),
    seed: Type.Integer(),
    path: Type.String(),
    requests: Type.Integer({ minimum: 1 }),
    promptTokens: Type.Integer({ minimum: 1 }),
    rounds: Type.Integer({ minimum: 0 }),
    case: CaseSchema,
  },
  { additionalProperties: false },
);

export const KillsSchema = Type.Object(
  {
    formatVersion: Type.Literal(1),
    /** How the file was produced (the command line). */
    generatedBy: Type.String(),
    kills: Type.Array(KillSchema),
  },
  { additionalProperties: false },
);

export type Kill = Static<typeof KillSchema>;
export type Kills = Static<typeof KillsSchema>;

export function loadKills(file = KILLS_FILE): Kills {
  const data = parseJsonText(readInputFile(file), file);
  const result = validateAgainst<Kills>(KillsSchema, data, "kills");
  if (!result.ok) throw InputError.fromIssues(file, result.errors);
  return result.value;
}

export function writeKills(kills: Kills, file = KILLS_FILE): void {
  const result = validateAgainst<Kills>(KillsSchema, kills, "kills");
  if (!result.ok)
    throw new Error(
      `kills fail their schema: ${result.errors.map((issue) => `${issue.path} ${issue.message}`).join("; ")}`,
    );
  writeJsonAtomic(file, kills);
}
