// Which residual streams llama.cpp's EAGLE-3 reads for the checkpoint's eagle_aux_hidden_state_layer_ids: EAGLE-3
// cases of one request each (so no batching defect enters) through llama-server (`specconf engine llama-server`,
// the GGUF export: eagle3.target_layers = the ids, copied), their logged drafts of every round compared with the
// reference engine's for the same case, read as specconf reads the ids (id k: the input of layer k) and with the
// fault eagle3-aux-layer-off-by-one (id k: the output of layer k, SGLang's explicit ids before sglang PR 25454).
// The evidence of the retraction docs/findings/llama-server-eagle3-aux-layers.md (docs/design.md, "EAGLE-3
// auxiliary layers").
//   npx tsx scripts/llama-server/eagle3-aux-layers.ts [--cases N] [--engine "CMD"]
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { defineFlags, parseFlags } from "../../src/cli/args.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { defaultDraftSpec } from "../../src/model/spec.ts";
import { ExternalSource } from "../../src/sources/external.ts";
import type { Trace } from "../../src/trace/schema.ts";

const FLAGS = defineFlags({
  cases: { type: "integer", min: 1, default: 12, description: "cases per target and id list" },
  engine: { type: "string", default: "node bin/specconf.js engine llama-server", description: "the engine command" },
});

/**
 * Target presets and the id lists tried on them: the defaults (small-gqa [0, 1, 2]; tiny [0, 1, 1], an id repeated)
 * and explicit ones: unordered, and one naming the last layer's output (3 on the 3-layer target).
 */
const TARGETS: { preset: string; auxLayers?: number[] }[] = [
  { preset: "small-gqa" },
  { preset: "small-gqa", auxLayers: [2, 0, 1] },
  { preset: "small-gqa", auxLayers: [1, 2, 3] },
  { preset: "tiny" },
];

function eagle3Case(preset: string, auxLayers: number[] | undefined, index: number): Case {
  const rng = xoroshiro128plus(7919 * (index + 1));
  const vocab = preset === "tiny" ? 64 : 48;
  const suffix = Array.from({ length: uniformInt(rng, 2, 8) }, () => uniformInt(rng, 2, vocab - 1));
  const draft = {
    ...defaultDraftSpec("eagle3", index + 1, { normBeforeFc: index % 2 === 0 }),
    ...(auxLayers ? { auxLayers } : {}),
  };
  return {
    formatVersion: 1,
    model: { preset },
    draft,
    engine: defaultEngineConfig({ numSteps: 3, pageSize: 1, poolSlots: 512 }),
    workload: { requests: [{ id: 0, prompt: [1, ...suffix], maxNewTokens: 8, arrivalStep: 0 }], aborts: [] },
  };
}

/** Each verify round's drafts (the rows after the root), by the root's position. */
function rounds(trace: Trace): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const event of trace.events)
    if (event.verify?.length)
      out.set(
        event.rows[0].position,
        event.rows.slice(1).map((row) => row.token),
      );
  return out;
}

/**
 * The server's round agrees with the reference's round at the same root: its drafts are the first of the
 * reference's (the server drafts fewer near the token limit, common_speculative_get_output_limits).
 */
function agrees(server: number[], reference: number[] | undefined): boolean {
  return reference !== undefined && server.length > 0 && server.every((token, i) => token === reference[i]);
}

async function main(): Promise<void> {
  const { values } = parseFlags(FLAGS, process.argv.slice(2));
  const engine = await ExternalSource.start(values.engine, { timeoutMs: 120_000 });
  try {
    for (const target of TARGETS) {
      const tally = { cases: 0, drafted: 0, rounds: 0, asInputs: 0, asOutputs: 0, firstAsInputs: 0, firstAsOutputs: 0 };
      for (let index = 0; index < values.cases; index++) {
        const testCase = eagle3Case(target.preset, target.auxLayers, index);
        const server = rounds((await engine.run(testCase)).trace);
        const reference = async (faults: FaultName[]) =>
          rounds((await runCase({ ...testCase, engine: { ...testCase.engine, faults } })).trace);
        const [inputs, outputs] = [await reference([]), await reference(["eagle3-aux-layer-off-by-one"])];
        tally.cases += 1;
        if (server.size === 0) continue; // no round logged (the first token ended it): nothing to compare
        tally.drafted += 1;
        const firstRoot = Math.min(...server.keys());
        tally.firstAsInputs += agrees(server.get(firstRoot)!, inputs.get(firstRoot)) ? 1 : 0;
        tally.firstAsOutputs += agrees(server.get(firstRoot)!, outputs.get(firstRoot)) ? 1 : 0;
        for (const [root, drafts] of server) {
          tally.rounds += 1;
          tally.asInputs += agrees(drafts, inputs.get(root)) ? 1 : 0;
          tally.asOutputs += agrees(drafts, outputs.get(root)) ? 1 : 0;
        }
      }
      const ids = target.auxLayers ? `ids ${JSON.stringify(target.auxLayers)}` : "default ids";
      process.stdout.write(
        `${target.preset}, ${ids}: ${tally.cases} cases, ${tally.drafted} with a round; first-round drafts equal ` +
          `the reference read as inputs ${tally.firstAsInputs}/${tally.drafted}, as outputs (+1) ` +
          `${tally.firstAsOutputs}/${tally.drafted}; ` +
          `every logged round (its drafts the first of the reference's at the same root): as inputs ` +
          `${tally.asInputs}/${tally.rounds}, as outputs ${tally.asOutputs}/${tally.rounds}\n`,
      );
    }
  } finally {
    await engine.close();
  }
}

await main();
