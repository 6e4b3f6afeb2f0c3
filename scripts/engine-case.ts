// Runs case files through an external engine: every law checkExternalCase applies (the case, its target-only
// baseline and twins, all through the engine), then each speculative round the engine's trace shows, next to
// the reference target's argmax at the same positions. The reproducer of docs/findings/*.md until
// `specconf check --engine` takes case files.
//
//   npx tsx scripts/engine-case.ts [--engine "CMD"] CASE.json...
//
// Default engine: llama.cpp with GGUF exports written on demand under .specconf/gguf. Exit 1 when a law
// fails, 2 on bad input or an engine crash, timeout or protocol error.
import { checkExternalCase } from "../src/adapter/check-external.ts";
import { ExternalEngine, ExternalEngineError } from "../src/adapter/client.ts";
import { loadCaseFile } from "../src/case/load.ts";
import { defineFlags, parseFlags, UsageError } from "../src/cli/args.ts";
import { loadModels } from "../src/engine/run-case.ts";
import { ReferenceOracle } from "../src/laws/oracle.ts";
import { InputError } from "../src/schema/input-error.ts";

const FLAGS = defineFlags({
  engine: {
    type: "string",
    default: "node bin/specconf.js engine llama-cpp --models .specconf/gguf --write-missing",
    description: "the engine command",
  },
  "timeout-ms": { type: "integer", min: 1, default: 120_000, description: "per-request timeout" },
});

async function main(): Promise<number> {
  const { values, positionals } = parseFlags(FLAGS, process.argv.slice(2), { allowPositionals: true });
  if (positionals.length === 0) throw new UsageError("give one or more case files");
  const cases = positionals.map((path) => ({ path, testCase: loadCaseFile(path) }));
  const engine = ExternalEngine.start(values.engine);
  let failed = false;
  try {
    for (const { path, testCase } of cases) {
      const options = { timeoutMs: values["timeout-ms"] };
      const check = await checkExternalCase(engine, testCase, options);
      process.stdout.write(`${path}${check.skipped ? `: skipped (${check.skipped})` : ""}\n`);
      for (const law of check.results) {
        failed ||= law.status === "fails";
        const detail = law.violation?.message ?? law.reason ?? "";
        process.stdout.write(
          `  ${law.law.padEnd(24)} ${law.status}${law.ties ? ` (${law.ties} ties)` : ""} ${detail}\n`,
        );
      }
      if (check.skipped) continue;
      const { trace } = await engine.run(testCase, options);
      const oracle = await ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
      for (const event of trace?.events ?? []) {
        for (const result of event.verify ?? []) {
          const request = trace!.requests!.find((candidate) => candidate.id === result.request)!;
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
    if (error instanceof UsageError || error instanceof InputError || error instanceof ExternalEngineError) {
      process.stderr.write(`engine-case: ${error.message}\n`);
      process.exitCode = 2;
    } else throw error;
  },
);
