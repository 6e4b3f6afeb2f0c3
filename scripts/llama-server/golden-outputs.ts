// The golden suites' cases through an external engine, written as an outputs file for `specconf validate`
// (docs/validate.md): a third party's outputs against the checked-in golden files. Cases the engine cannot run
// as written are run in the form it can when the laws say the outputs do not change: unchunked, page size 1,
// every request arriving at once (chunk, page-size and batch invariance: tokens, accept lengths and first-round
// drafts equal those of that run).
// Cases it still refuses (trees, faults) are listed as skipped.
//
//   npx tsx scripts/llama-server/golden-outputs.ts [--engine "CMD"] --out DIR golden/SUITE.json...
//   npx specconf validate --golden golden/SUITE.json --outputs DIR/SUITE.jsonl
import { writeFileSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { defineFlags, parseFlags, UsageError } from "../../src/cli/args.ts";
import { loadGoldenFile } from "../../src/golden/load.ts";
import { ExternalSource } from "../../src/sources/external.ts";
import { Unavailable } from "../../src/check/source.ts";
import { ReportedOutputFields } from "../../src/trace/outputs-line.ts";

const FLAGS = defineFlags({
  engine: { type: "string", default: "node bin/specconf.js engine llama-server", description: "the engine command" },
  out: { type: "string", valueName: "DIR", description: "folder for SUITE.jsonl outputs files" },
});

async function main(): Promise<number> {
  const { values, positionals } = parseFlags(FLAGS, process.argv.slice(2), { allowPositionals: true });
  if (positionals.length === 0) throw new UsageError("give one or more golden files");
  if (!values.out) throw new UsageError("--out DIR is required", "--out");
  mkdirSync(values.out, { recursive: true });
  const engine = await ExternalSource.start(values.engine, { timeoutMs: 120_000 });
  try {
    for (const file of positionals) {
      const golden = loadGoldenFile(file);
      const lines: string[] = [];
      for (const goldenCase of golden.cases) {
        const unchunked = {
          ...goldenCase.case,
          engine: { ...goldenCase.case.engine, chunkSize: null, tokenBudget: 1 << 20, pageSize: 1 },
          workload: {
            ...goldenCase.case.workload,
            requests: goldenCase.case.workload.requests.map((request) => ({ ...request, arrivalStep: 0 })),
          },
        };
        try {
          const run = await engine.run(unchunked);
          for (const output of run.outputs) {
            // The outputs line's fields only (the run source adds its own bookkeeping).
            const fields = Object.fromEntries(Object.entries(output).filter(([key]) => key in ReportedOutputFields));
            // The run source keeps no firstRoundDrafts: they are the engine trace's first verify rows after the root.
            const first = run.trace.events.find((event) =>
              event.verify?.some((result) => result.request === output.id),
            );
            const drafts = first?.rows
              .filter((row) => row.request === output.id)
              .slice(1)
              .map((row) => row.token);
            const firstRound =
              drafts && drafts.length === goldenCase.case.engine.numSteps ? { firstRoundDrafts: drafts } : {};
            lines.push(JSON.stringify({ formatVersion: 1, case: goldenCase.name, ...fields, ...firstRound }));
          }
          process.stdout.write(`${file} ${goldenCase.name}: ${run.outputs.length} requests\n`);
        } catch (error) {
          if (!(error instanceof Unavailable)) throw error;
          process.stdout.write(`${file} ${goldenCase.name}: skipped (${error.message})\n`);
        }
      }
      const out = join(values.out, basename(file).replace(/\.json$/, ".jsonl"));
      writeFileSync(out, lines.length ? `${lines.join("\n")}\n` : "");
      process.stdout.write(`  -> npx specconf validate --golden ${file} --outputs ${out}\n`);
    }
  } finally {
    await engine.close();
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`golden-outputs: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
