// Pinned findings: laws known to fail on one version of a real engine, each naming the finding that says
// why (docs/findings/). `specconf check --engine CMD --pins FILE` checks them like every other law and
// reports their failures, but a failure of a pinned law does not fail the run; a pinned law that never fails
// does (the engine changed: update the finding and the pin). Pins never relax a law: they say which failures
// are already reported upstream, so a new one still turns the run red.
import { Type, type Static } from "@sinclair/typebox";
import { lawByName } from "../laws/registry.ts";
import { InputError, parseJsonText, readInputFile } from "../schema/input-error.ts";
import { validateAgainst } from "../schema/validator.ts";

export const PinsSchema = Type.Object(
  {
    formatVersion: Type.Literal(1),
    /** The engine and version the findings were made on. */
    engine: Type.String({ minLength: 1 }),
    pins: Type.Array(
      Type.Object(
        {
          /** A law's name (loosely spelled, as --law takes it). */
          law: Type.String({ minLength: 1 }),
          /** The finding's document, relative to the repository. */
          finding: Type.String({ minLength: 1 }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);

export type Pins = Static<typeof PinsSchema>;

/** Reads a pins file; every law must exist. Returns the pinned law names (canonical) and the findings. */
export function loadPins(file: string): { engine: string; laws: Map<string, string> } {
  const data = parseJsonText(readInputFile(file), file);
  const result = validateAgainst<Pins>(PinsSchema, data, "pins");
  if (!result.ok) throw InputError.fromIssues(file, result.errors);
  const laws = new Map<string, string>();
  result.value.pins.forEach((pin, i) => {
    const law = lawByName(pin.law);
    if (!law) throw new InputError(file, `/pins/${i}/law`, `no law '${pin.law}'`);
    laws.set(law.name, pin.finding);
  });
  return { engine: result.value.engine, laws };
}
