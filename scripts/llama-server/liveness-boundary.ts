// Law "speculation engaged" on llama-server at the boundaries where its rounds stop fitting, which the law's
// generated cases reach only through the cap: hand-made cases of two requests, one filling its slot's context
// (case contextLength: --kv-unified-per-slot), the other stopping at max new tokens, over the draft-model drafters
// (mirror, noisy mirror, EAGLE-3), S = 1..4 and contexts 12..17 tokens past the longer prompt. The server drafts only
// when get_n_draft_max() = min(n_ctx - n_tokens - 2, n_remaining - 1) >= S (server-context.cpp); the law's room
// (docs/laws.md) must never ask for more. Prints one line per case and the totals; exit 1 when the law fails a case.
//   npx tsx scripts/llama-server/liveness-boundary.ts BINARY
import { ExternalSource } from "../../src/sources/external.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import type { Case } from "../../src/case/case.ts";
import { checkSpeculationEngaged } from "../../src/laws/speculation-engaged.ts";

const binary = process.argv[2];
if (!binary) {
  console.error("usage: npx tsx scripts/llama-server/liveness-boundary.ts BINARY");
  process.exit(2);
}

function boundaryCase(draft: "mirror" | "noisy-mirror" | "eagle3", steps: number, gap: number): Case {
  const base = defaultCase({
    preset: "tiny",
    draft,
    seed: 3,
    numRequests: 2,
    maxNewTokens: 12,
    engine: { numSteps: steps, numDraftTokens: steps + 1 },
  });
  const context = Math.max(...base.workload.requests.map((request) => request.prompt.length)) + 12 + gap;
  // Request 0 may fill the context (its cap is what the context leaves), request 1 stops at its cap.
  const requests = base.workload.requests.map((request, i) => ({
    ...request,
    maxNewTokens: i === 0 ? context - request.prompt.length : 12,
  }));
  return { ...base, engine: { ...base.engine, contextLength: context }, workload: { ...base.workload, requests } };
}

const source = await ExternalSource.start(`node bin/specconf.js engine llama-server --binary ${binary}`);
const totals = { cases: 0, held: 0, failed: 0, judged: 0 };
try {
  for (const draft of ["mirror", "noisy-mirror", "eagle3"] as const)
    for (const steps of [1, 2, 3, 4])
      for (const gap of [0, 1, 2, 3, 4, 5]) {
        const testCase = boundaryCase(draft, steps, gap);
        const run = await source.run(testCase);
        const result = checkSpeculationEngaged(testCase, run);
        totals.cases += 1;
        totals.judged += result.checked;
        if (result.status === "holds") totals.held += 1;
        if (result.status === "fails") totals.failed += 1;
        const rounds = run.outputs.map((output) => output.acceptLens.join(",") || "-").join(" / ");
        console.log(
          `${draft} S=${steps} context ${testCase.engine.contextLength}: ${result.status} (${result.checked} judged)${result.violation ? `: ${result.violation.message}` : ""}; accept lengths ${rounds}`,
        );
      }
} finally {
  await source.close();
}
console.log(
  `boundary cases: ${totals.cases}, held ${totals.held}, failed ${totals.failed}, steps and rounds judged ${totals.judged}`,
);
process.exit(totals.failed > 0 ? 1 : 0);
