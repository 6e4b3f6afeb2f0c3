// Issue 34 (item 7): corners a law guards must be reached often enough that a planted bug in each is caught within
// `check --runs 30`. For each property that draws a corner's dimension, over a few seeds: how many of 30 fault-free
// runs reach each coverage label, and, with each corner's planted fault on, at which run (of at most 30) the
// property fails. Prints one line per property and seed.
//
//   npx tsx scripts/corner-rates.ts [--seeds 1,2,3] [--runs 30] [--property NAME]... [--label L]... [--fault F]...
import { parseArgs } from "node:util";
import type { FaultName } from "../src/case/faults.ts";
import type { CoverageLabel } from "../src/check/coverage.ts";
import { propertyFor } from "../src/properties/law-properties.ts";
import { runLawProperty } from "../src/properties/law-property.ts";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1,2,3" },
    runs: { type: "string", default: "30" },
    property: {
      type: "string",
      multiple: true,
      default: ["stop string end", "stop trim", "stream deltas", "usage counts"],
    },
    label: {
      type: "string",
      multiple: true,
      default: ["two stop strings completed by one token", "abort while text is held back"],
    },
    fault: { type: "string", multiple: true, default: ["stop-strings-by-list-order", "held-text-dropped-on-abort"] },
  },
});
const seeds = values.seeds!.split(",").map(Number);
const runs = Number(values.runs);

for (const name of values.property!) {
  const property = propertyFor(name);
  if (!property) throw new Error(`no property '${name}'`);
  for (const seed of seeds) {
    const clean = await runLawProperty(property, { numRuns: runs, seed, failureDir: false });
    const counts = values.label!.map(
      (label) => `${label}: ${clean.coverage.counts[label as CoverageLabel]}/${clean.runs}`,
    );
    const detections: string[] = [];
    for (const fault of values.fault!) {
      const run = await runLawProperty(property, {
        numRuns: runs,
        seed,
        faults: [fault as FaultName],
        failureDir: false,
        shrinkSeconds: 0,
      });
      detections.push(
        `${fault}: ${run.failure ? `run ${run.runs} (${run.failure.detectSeconds.toFixed(1)} s, ${run.failure.firstLaws.join("/")})` : `survives ${run.runs}`}`,
      );
    }
    console.log(
      `${name}, seed ${seed}: ${counts.join(", ")}; ${detections.join("; ")}${clean.failure ? ` [fault-free run FAILED: ${clean.failure.laws.join(", ")}]` : ""}`,
    );
  }
}
