// Which auxiliary layers llama.cpp's EAGLE-3 reads: the golden small-gqa-eagle3 case's first-round drafts from the
// reference engine as SGLang and vLLM read the checkpoint (eagle_aux_hidden_state_layer_ids name layer outputs),
// and with the fault eagle3-aux-layer-off-by-one (the states captured at each named layer's input, as llama.cpp's
// llama_set_embeddings_layer_inp does). Compare with llama-server's drafts for the same case
// (scripts/llama-server/golden-outputs.ts, then `specconf validate`): docs/findings/llama-server-eagle3-aux-layers.md.
//   npx tsx scripts/llama-server/eagle3-aux-layers.ts
import { loadGoldenFile } from "../../src/golden/load.ts";
import { runCase } from "../../src/engine/run-case.ts";
import type { Case } from "../../src/case/case.ts";
import type { FaultName } from "../../src/case/faults.ts";

const golden = loadGoldenFile("golden/small-gqa-eagle3.json");
const goldenCase = golden.cases.find((entry) => entry.name === "chunked")!.case;
const unchunked: Case = {
  ...goldenCase,
  engine: { ...goldenCase.engine, chunkSize: null, tokenBudget: 1 << 20 },
  workload: { ...goldenCase.workload, requests: goldenCase.workload.requests.map((r) => ({ ...r, arrivalStep: 0 })) },
};
for (const faults of [[], ["eagle3-aux-layer-off-by-one"]] as FaultName[][]) {
  const run = await runCase({ ...unchunked, engine: { ...unchunked.engine, faults } });
  const drafts = run.outputs.map((output) => {
    const event = run.trace.events.find((e) => e.phase === "verify" && e.verify?.some((v) => v.request === output.id));
    return event?.rows
      .filter((row) => row.request === output.id)
      .slice(1)
      .map((row) => row.token);
  });
  process.stdout.write(
    `${faults.length ? faults.join(",") : "as SGLang/vLLM read it"}: first-round drafts ${JSON.stringify(drafts)}\n`,
  );
}
