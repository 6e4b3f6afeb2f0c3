// Mutants through the protocol: `specconf check --engine "<adapter> --fault F"` for every named fault, and
// the clean adapter with fresh seeds. For each fault: whether the generated cases found it, the laws that
// failed, each failure's shrunk size (requests, prompt tokens) and the time; for the clean engine: every
// law holds. This is the evidence that generated cases, shrinking and failure files work through an engine.
//
//   npx tsx scripts/engine-mutants.ts [--runs 30] [--seed 1] [--clean-seeds 3] [--adapter "node bin/specconf.js adapter"]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomInt } from "node:crypto";
import { narrowSpace } from "../src/properties/arbitraries/capabilities.ts";
import { LAW_PROPERTIES } from "../src/properties/law-properties.ts";
import { runSuite } from "../src/properties/suite.ts";
import { defineFlags, parseFlags } from "../src/cli/args.ts";
import { FAULT_NAMES } from "../src/case/faults.ts";
import { ExternalSource } from "../src/sources/external.ts";

const FLAGS = defineFlags({
  runs: { type: "integer", min: 1, default: 30, description: "generated runs per law property" },
  seed: { type: "integer", default: 1, description: "fast-check seed of the fault runs" },
  "clean-seeds": { type: "integer", min: 0, default: 3, description: "fresh seeds for the clean engine" },
  adapter: { type: "string", default: "node bin/specconf.js adapter", description: "the engine command" },
  fault: { type: "string", multiple: true, description: "only these faults" },
});
const { values } = parseFlags(FLAGS, process.argv.slice(2));
const dir = mkdtempSync(join(tmpdir(), "specconf-engine-mutants-"));

async function suiteThrough(command: string, seed: number) {
  const start = performance.now();
  const source = await ExternalSource.start(command);
  try {
    const suite = await runSuite({
      properties: LAW_PROPERTIES,
      runs: values.runs,
      seed,
      source,
      engine: { command, name: source.name },
      narrow: (space) => narrowSpace(space, source.capabilities),
      failureDir: dir,
      shrinkSeconds: 30,
    });
    const failures = suite.runs.flatMap((run) => (run.failure ? [run.failure] : []));
    return { seconds: (performance.now() - start) / 1000, failures, restarts: source.restarts };
  } finally {
    await source.close();
  }
}

const rows: string[] = [];
for (const fault of values.fault.length > 0 ? values.fault : FAULT_NAMES) {
  const { seconds, failures } = await suiteThrough(`${values.adapter} --fault ${fault}`, values.seed);
  const sizes = failures.map((failure) => {
    const requests = failure.testCase.workload.requests;
    return { requests: requests.length, tokens: requests.reduce((sum, request) => sum + request.prompt.length, 0) };
  });
  // The smallest failure is the one to hand over; some properties' focus has a larger minimum (chunk
  // invariance draws suffixes of 2+ tokens), so the largest is reported too.
  const bySize = [...sizes].sort((a, b) => a.requests - b.requests || a.tokens - b.tokens);
  const smallest = bySize[0] ?? { requests: 0, tokens: 0 };
  const largest = bySize[bySize.length - 1] ?? { requests: 0, tokens: 0 };
  const laws = [...new Set(failures.flatMap((failure) => failure.laws))];
  const small = failures.length > 0 && smallest.requests <= 2 && smallest.tokens <= 12;
  rows.push(
    `${fault.padEnd(38)} ${failures.length > 0 ? "KILLED" : "missed"}  ${String(failures.length).padStart(2)} failing properties, smallest shrunk ${smallest.requests} req / ${smallest.tokens} tokens ${small ? "(<= 2 / 12)" : "(LARGER)"}, largest ${largest.requests} / ${largest.tokens}, ${seconds.toFixed(0)}s  laws: ${laws.join(", ")}`,
  );
  process.stderr.write(`${rows[rows.length - 1]}\n`);
}
for (let i = 0; i < values["clean-seeds"]; i++) {
  const seed = randomInt(0, 2 ** 31 - 1);
  const { seconds, failures, restarts } = await suiteThrough(values.adapter, seed);
  rows.push(
    `clean adapter, seed ${String(seed).padEnd(12)} ${failures.length === 0 ? "no law failed" : `FAILED: ${failures.map((failure) => failure.laws.join("+")).join("; ")}`}, ${seconds.toFixed(0)}s, ${restarts} restarts`,
  );
  process.stderr.write(`${rows[rows.length - 1]}\n`);
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${rows.join("\n")}\n`);
