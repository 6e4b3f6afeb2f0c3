import fc from "fast-check";
import { propertyArbitrary } from "./properties/law-property.ts";
import { propertyFor } from "./properties/index.ts";
import { checkLaws, failures } from "./src/laws/runner.ts";
import { LAWS } from "./src/laws/registry.ts";
import { referenceSource } from "./src/sources/reference.ts";
const property = process.env.PROP ? propertyFor(process.env.PROP)! : (await import("./properties/index.ts")).MIXED;
const source = referenceSource();
const cases = fc.sample(propertyArbitrary(property, []), { seed: Number(process.env.SEED ?? 1), numRuns: Number(process.env.N ?? 25) });
for (const c of cases) {
  const check = await checkLaws(source, c, { laws: LAWS.filter((l) => l.name === "positions") });
  for (const f of failures(check)) { console.log(f.violation?.message, JSON.stringify(c.engine), c.draft?.kind); break; }
}
