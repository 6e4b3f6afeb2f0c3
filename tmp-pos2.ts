import fc from "fast-check";
import { propertyArbitrary } from "./properties/law-property.ts";
import { propertyFor } from "./properties/index.ts";
import { referenceSource } from "./src/sources/reference.ts";
const property = propertyFor("padding-poison invariance")!;
const source = referenceSource();
const cases = fc.sample(propertyArbitrary(property, []), { seed: 1, numRuns: 25 });
const c = cases.find((c) => c.engine.overlap && c.engine.numSteps === 1 && c.engine.topk === 4)!;
const run = await source.run(c);
for (const e of run.trace.events) {
  const rows = e.rows.filter((r) => r.request === 0);
  if (!rows.length) continue;
  console.log(e.index, e.step, e.phase, e.pool, rows.map((r) => `${r.position}${r.temporary ? "t" : ""}${r.discarded ? "D" : ""}[${JSON.stringify(r.attended?.positions)}]`).join(" "), JSON.stringify(e.verify?.filter(v=>v.request===0).map(v => [v.acceptLen, v.discarded])));
}
