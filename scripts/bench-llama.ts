// llama.cpp engine throughput, side by side with the reference engine on the same cases: per-case wall time
// (through the protocol, so it includes JSON and process hops) and generated tokens per second, for
// target-only, draft-model (mirror and truncated-mirror standalone drafts) and prompt lookup, on one and
// several sequences per context. Also the engine's start-up time (process start to the first answer).
//
//   npx tsx scripts/bench-llama.ts [--presets tiny,medium] [--tokens 64] [--repeat 3] [--threads 1] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExternalEngine } from "../src/adapter/client.ts";
import type { Case } from "../src/case/case.ts";
import { defineFlags, parseFlags } from "../src/cli/args.ts";
import { defaultEngineConfig } from "../src/case/engine-config.ts";
import { runCase } from "../src/engine/run-case.ts";
import { writeCaseGguf } from "../src/adapter/llama-cpp/model-files.ts";
import { getPreset } from "../src/model/presets.ts";
import { defaultDraftSpec, type DraftKind } from "../src/model/spec.ts";

const FLAGS = defineFlags({
  presets: { type: "string", default: "tiny,medium", description: "model presets (comma-separated)" },
  tokens: { type: "integer", min: 1, default: 64, description: "max new tokens per request" },
  repeat: { type: "integer", min: 1, default: 3, description: "runs per row (the median is reported)" },
  threads: { type: "integer", min: 1, default: 1, description: "llama.cpp threads per context" },
  json: { type: "boolean", description: "print one JSON object" },
});

interface Row {
  preset: string;
  mode: string;
  sequences: number;
  tokens: number;
  llamaMs: number;
  llamaTokensPerSecond: number;
  referenceMs: number;
  referenceTokensPerSecond: number;
  meanAcceptLen?: number;
}

function benchCase(preset: string, draft: DraftKind | null, sequences: number, maxNewTokens: number): Case {
  const spec = getPreset(preset);
  // Prompts: the preamble plus a few seeded tokens, different per request.
  const prompts = Array.from({ length: sequences }, (_, r) => [
    ...spec.preamble,
    ...Array.from({ length: 4 + r }, (_, i) => 3 + ((r * 7 + i * 13) % (spec.vocab - 3))),
  ]);
  return {
    formatVersion: 1,
    model: { preset },
    draft: draft ? { ...defaultDraftSpec(draft), truncatedLayers: 1 } : null,
    engine: defaultEngineConfig({ mode: draft ? "speculative" : "target-only", numSteps: 4, poolSlots: 8192 }),
    workload: {
      requests: prompts.map((prompt, id) => ({ id, prompt, maxNewTokens, arrivalStep: 0 })),
      aborts: [],
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const { values } = parseFlags(FLAGS, process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), "specconf-bench-llama-"));
  const started = performance.now();
  const engine = ExternalEngine.start(
    `node bin/specconf.js engine llama-cpp --models ${dir} --write-missing --threads ${values.threads}`,
  );
  const rows: Row[] = [];
  let startupMs = 0;
  try {
    for (const preset of values.presets.split(",")) {
      for (const draft of [null, "mirror", "truncated-mirror", "ngram"] as const) {
        for (const sequences of [1, 4]) {
          const testCase = benchCase(preset, draft, sequences, values.tokens);
          writeCaseGguf(testCase, dir);
          if (startupMs === 0) {
            await engine.run(testCase, { timeoutMs: 300_000, wantTrace: false });
            startupMs = performance.now() - started;
          }
          const llamaTimes: number[] = [];
          const referenceTimes: number[] = [];
          let tokens = 0;
          let acceptLens: number[] = [];
          for (let i = 0; i < values.repeat; i++) {
            const t0 = performance.now();
            const result = await engine.run(testCase, { timeoutMs: 300_000, wantTrace: false });
            llamaTimes.push(performance.now() - t0);
            tokens = result.outputs.reduce((sum, output) => sum + output.tokens.length, 0);
            acceptLens = result.outputs.flatMap((output) => output.acceptLens ?? []);
            const t1 = performance.now();
            if (draft !== "ngram") await runCase(testCase, { trace: false });
            referenceTimes.push(performance.now() - t1);
          }
          const llamaMs = median(llamaTimes);
          const referenceMs = draft === "ngram" ? NaN : median(referenceTimes);
          rows.push({
            preset,
            mode: draft ?? "target-only",
            sequences,
            tokens,
            llamaMs,
            llamaTokensPerSecond: (tokens / llamaMs) * 1000,
            referenceMs,
            referenceTokensPerSecond: (tokens / referenceMs) * 1000,
            ...(acceptLens.length > 0
              ? { meanAcceptLen: acceptLens.reduce((sum, len) => sum + len, 0) / acceptLens.length }
              : {}),
          });
        }
      }
    }
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ startupMs, threads: values.threads, rows })}\n`);
    return;
  }
  process.stdout.write(`engine start-up and first case: ${(startupMs / 1000).toFixed(1)} s\n`);
  process.stdout.write(
    "preset   mode              seqs  tokens  llama ms  llama tok/s  mean accept_len  reference ms  reference tok/s\n",
  );
  for (const row of rows)
    process.stdout.write(
      `${row.preset.padEnd(8)} ${row.mode.padEnd(17)} ${String(row.sequences).padStart(4)} ${String(row.tokens).padStart(7)} ${row.llamaMs.toFixed(0).padStart(9)} ${row.llamaTokensPerSecond.toFixed(0).padStart(12)} ${(row.meanAcceptLen?.toFixed(2) ?? "-").padStart(16)} ${(Number.isNaN(row.referenceMs) ? "-" : row.referenceMs.toFixed(0)).padStart(13)} ${(Number.isNaN(row.referenceMs) ? "-" : row.referenceTokensPerSecond.toFixed(0)).padStart(16)}\n`,
    );
}

await main();
