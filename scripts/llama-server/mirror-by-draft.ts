// The cases `check --engine CMD --eagle3-oracle --runs R --seed S` generates, run the same way (every property, the
// same seed, so the same cases: a property's runs are one fc.check whatever the worker split), with law "mirror
// acceptance"'s verdicts counted per draft kind and per number of requests: how many EAGLE-3 oracle cases it judged,
// and where each failure was (issue 34), beside every law's judged and failing cases. One line per failing case. Properties can be dealt over processes
// (--shard K/N: the K-th of every N properties) and the printed JSON tallies added up.
//
//   npx tsx scripts/llama-server/mirror-by-draft.ts --engine "CMD" [--runs 40] [--seed 1] [--pins FILE] [--shard K/N]
import type { Case } from "../../src/case/case.ts";
import { defineFlags, parseFlags, UsageError } from "../../src/cli/args.ts";
import { loadPins } from "../../src/failures/pins.ts";
import { MIRROR_ACCEPTANCE } from "../../src/laws/mirror-acceptance.ts";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { LAW_PROPERTIES, oracleProperty } from "../../src/properties/law-properties.ts";
import { runLawProperty } from "../../src/properties/law-property.ts";
import { ExternalSource } from "../../src/sources/external.ts";

const FLAGS = defineFlags({
  engine: { type: "string", description: "the engine command" },
  runs: { type: "integer", min: 1, default: 40, description: "runs per property" },
  seed: { type: "integer", min: 0, default: 1, description: "the check's seed" },
  pins: { type: "string", description: "pinned laws (their failures do not end a property)" },
  shard: { type: "string", default: "1/1", description: "K/N: every N-th property from the K-th" },
});

type Tally = Record<string, { judged: number; failed: number }>;

function draftOf(testCase: Case): string {
  const draft = testCase.draft;
  if (!draft || testCase.engine.mode !== "speculative") return "none";
  return draft.oracle ? "eagle3 oracle" : draft.kind;
}

async function main(): Promise<void> {
  const { values } = parseFlags(FLAGS, process.argv.slice(2));
  if (!values.engine) throw new UsageError("--engine is required", "--engine");
  const [k, n] = values.shard.split("/").map(Number);
  const source = await ExternalSource.start(values.engine, { timeoutMs: 60_000 });
  const pinned = values.pins ? new Set(loadPins(values.pins).laws.keys()) : undefined;
  const tally: Tally = {};
  const laws: Tally = {};
  const count = (key: string, failed: boolean) => {
    tally[key] ??= { judged: 0, failed: 0 };
    tally[key].judged += 1;
    if (failed) tally[key].failed += 1;
  };
  try {
    for (const [index, base] of LAW_PROPERTIES.entries()) {
      if (index % n !== k - 1) continue;
      const property = oracleProperty(base, true);
      const narrowed = narrowSpace({ ...property.space, faults: [] }, source.capabilities);
      if (typeof narrowed === "string") continue;
      await runLawProperty(property, {
        numRuns: values.runs,
        seed: values.seed,
        source,
        pinned,
        failureDir: false,
        shrinkSeconds: 0,
        arbitrary: caseArbitrary(narrowed),
        onRun: (check) => {
          for (const result of check.results) {
            if (result.status !== "holds" && result.status !== "fails") continue;
            laws[result.law] ??= { judged: 0, failed: 0 };
            laws[result.law].judged += 1;
            if (result.status === "fails") laws[result.law].failed += 1;
          }
          const verdict = check.results.find((result) => result.law === MIRROR_ACCEPTANCE);
          if (!verdict || (verdict.status !== "holds" && verdict.status !== "fails")) return;
          const failed = verdict.status === "fails";
          const requests = check.testCase.workload.requests.length;
          count(`${draftOf(check.testCase)}`, failed);
          count(`${draftOf(check.testCase)}, ${requests === 1 ? "1 request" : "2+ requests"}`, failed);
          if (failed)
            console.error(
              `${property.law}: ${draftOf(check.testCase)}, ${requests} requests, S = ${check.testCase.engine.numSteps}: ${verdict.violation?.message}`,
            );
        },
      });
    }
  } finally {
    await source.close();
  }
  console.log(JSON.stringify({ seed: values.seed, shard: values.shard, tally, laws }));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(error instanceof UsageError ? 2 : 1);
});
