// Shrinks a law failure through the llama.cpp engine with fast-check (the property: the law does not fail).
import fc from "fast-check";
import { writeFileSync } from "node:fs";
import { ExternalEngine } from "/work/wt/llama/src/adapter/client.ts";
import { checkExternalCase } from "/work/wt/llama/src/adapter/check-external.ts";
import { caseArbitrary } from "/work/wt/llama/properties/arbitraries/case.ts";
import { space } from "/work/wt/llama/properties/arbitraries/space.ts";
import { defaultDraftSpec } from "/work/wt/llama/src/model/spec.ts";
const law = process.argv[2];
const drafts = process.argv[3].split(",");
const out = process.argv[4];
const s = space({ presets: ["tiny", "small-gqa", "small-mha"], drafts: ["mirror"], topks: [1], multiLayer: [false], graphReplay: [false], chunk: { none: true, min: 1, max: 1 }, pages: { min: 1, max: 1 }, maxArrival: 0, maxAborts: 0, retracts: { min: 0, max: 0 }, requests: { min: 1, max: 3 }, maxNewTokens: { min: 1, max: 24 }, steps: { min: 1, max: 6 }, suffix: { min: 0, max: 10 } });
const arb = fc.tuple(caseArbitrary(s), fc.constantFrom(...drafts)).map(([c, kind]) => ({ ...c, draft: defaultDraftSpec(kind as any), engine: { ...c.engine, chunkSize: null, tokenBudget: 256 }, workload: { ...c.workload, requests: c.workload.requests.map((r) => ({ ...r, arrivalStep: 0 })) } }));
const engine = ExternalEngine.start("node bin/specconf.js engine llama-cpp --models /tmp/smoke/models --write-missing");
let last: any;
const details = await fc.check(fc.asyncProperty(arb, async (c) => {
  const check = await checkExternalCase(engine, c, { timeoutMs: 120000 });
  const r = check.results.find((x) => x.law === law);
  if (r?.status === "fails") { last = { case: c, violation: r.violation }; return false; }
  return true;
}), { numRuns: 50, seed: Number(process.env.SEED ?? 7) });
await engine.close();
console.log("failed", details.failed, "runs", details.numRuns, "shrinks", details.numShrinks, "seed", details.seed, "path", details.counterexamplePath);
if (details.counterexample) { const c = details.counterexample[0]; console.log(JSON.stringify(c)); writeFileSync(out, JSON.stringify(c, null, 2)); console.log(JSON.stringify(last?.violation)); }
