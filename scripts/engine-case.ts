// Runs case files through an external engine: every law the runner applies (the case, its target-only
// baseline and twins, all through the engine, models from the model cache), then each speculative round the
// engine's trace shows, next to the reference target's argmax at the same positions. The reproducer of
// docs/findings/*.md (`specconf replay --engine` reruns a case too; this adds the rounds).
//
//   npx tsx scripts/engine-case.ts [--engine "CMD"] CASE.json...
//
// Default engine: llama.cpp. Exit 1 when a law fails, 2 on bad input or an engine that cannot start.
import { loadCaseFile } from "../src/case/load.ts";
import { defineFlags, parseFlags, UsageError } from "../src/cli/args.ts";
import { checkLaws } from "../src/check/runner.ts";
import { InputError } from "../src/schema/input-error.ts";
import { EngineStartError, ExternalSource } from "../src/sources/external.ts";

const FLAGS = defineFlags({
  engine: { type: "string", default: "node bin/specconf.js engine llama-cpp", description: "the engine command" },
  "timeout-ms": { type: "integer", min: 1, default: 120_000, description: "per-request timeout" },
});

async function main(): Promise<number> {
  const { values, positionals } = parseFlags(FLAGS, process.argv.slice(2), { allowPositionals: true });
  if (positionals.length === 0) throw new UsageError("give one or more case files");
  const cases = positionals.map((path) => ({ path, testCase: loadCaseFile(path) }));
  const engine = await ExternalSource.start(values.engine, { timeoutMs: values["timeout-ms"] });
  let failed = false;
  try {
    for (const { path, testCase } of cases) {
      const check = await checkLaws(engine, testCase);
      process.stdout.write(`${path}${check.skipped ? `: skipped (${check.skipped})` : ""}\n`);
      for (const law of check.results) {
        failed ||= law.status === "fails";
        const detail = law.violation?.message ?? law.reason ?? "";
        process.stdout.write(
          `  ${law.law.padEnd(24)} ${law.status}${law.ties ? ` (${law.ties} ties)` : ""} ${detail}\n`,
        );
      }
      if (!check.run) continue;
      const trace = check.run.trace;
      const oracle = await engine.oracle(testCase);
      for (const event of trace.events) {
        for (const result of event.verify ?? []) {
          const request = trace.requests!.find((candidate) => candidate.id === result.request)!;
          const reference = await oracle.targetOver([...request.prompt, ...request.output]);
          const rows = event.rows.filter((row) => row.request === result.request);
          const root = rows[0].position;
          const argmax = rows.slice(1).map((_, depth) => reference.predictions[root + depth]?.argmax ?? "-");
          process.stdout.write(
            `  round ${event.index} request ${result.request} root@${root}: drafts [${rows.slice(1).map((row) => row.token)}] reference argmax [${argmax}] accept_len ${result.acceptLen} produced [${result.acceptTokens}]\n`,
          );
        }
      }
    }
  } finally {
    await engine.close();
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof InputError || error instanceof EngineStartError) {
      process.stderr.write(`engine-case: ${error.message}\n`);
      process.exitCode = 2;
    } else throw error;
  },
);
