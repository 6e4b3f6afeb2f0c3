import fc from "fast-check";
import { propertyArbitrary } from "./properties/law-property.ts";
import { propertyFor } from "./properties/index.ts";
import { checkLaws, failures } from "./src/laws/runner.ts";
import { referenceSource } from "./src/sources/reference.ts";
const name = process.argv[2] ?? "padding-poison invariance";
const n = Number(process.argv[3] ?? 30);
const property = propertyFor(name)!;
const source = referenceSource();
for (const seed of [1, 2]) {
  const cases = fc.sample(propertyArbitrary(property, process.env.FAULT ? [process.env.FAULT as never] : []), { seed, numRuns: n });
  let fails = 0; const laws = new Map<string, number>();
  for (const c of cases) {
    const check = await checkLaws(source, c);
    const f = failures(check);
    if (f.length) fails++;
    for (const l of f) laws.set(l.law, (laws.get(l.law) ?? 0) + 1);
  }
  console.log(name, "seed", seed, "fails", fails, "/", n, [...laws]);
}
