// Mirror drafts accept every draft and are lossless for topk 1, 2 and 4 with N from S + 1 to
// min(16, 1 + K + (S-1)K^2), cycling chunked/unchunked, page sizes 1 and 4, graph replay and retracts
// through the matrix so every combination of one dimension with each other appears.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import { summarize } from "../../src/cli/run-summary.ts";

const VARIANTS = [
  { chunkSize: null, pageSize: 1, graphReplay: false, retract: false },
  { chunkSize: 3, pageSize: 4, graphReplay: true, retract: false },
  { chunkSize: 2, pageSize: 1, graphReplay: false, retract: true },
  { chunkSize: null, pageSize: 4, graphReplay: true, retract: true },
] as const;

describe("tree drafting with mirror drafts", () => {
  for (const numSteps of [1, 2, 3]) {
    for (const topk of [1, 2, 4]) {
      const maxTokens = topk === 1 ? numSteps + 1 : Math.min(16, 1 + topk + (numSteps - 1) * topk * topk);
      it(`S=${numSteps} K=${topk}: N ${numSteps + 1}..${maxTokens}`, async () => {
        for (let numDraftTokens = numSteps + 1; numDraftTokens <= maxTokens; numDraftTokens++) {
          const variant = VARIANTS[(numDraftTokens + topk + numSteps) % VARIANTS.length];
          const draft = numDraftTokens % 2 === 0 ? "mirror" : "tapped-mirror";
          const base = defaultCase({
            preset: "tiny",
            draft,
            seed: numDraftTokens,
            numRequests: 3,
            maxNewTokens: 10,
            engine: {
              numSteps,
              topk,
              numDraftTokens,
              chunkSize: variant.chunkSize,
              pageSize: variant.pageSize,
              graphReplay: variant.graphReplay,
            },
          });
          const retracts = variant.retract
            ? [
                { request: 0, step: 3, beforeForward: 1 },
                { request: 2, step: 5, beforeForward: 2 },
              ]
            : [];
          const testCase = { ...base, workload: { ...base.workload, retracts } };
          const targetOnly = await runCase({ ...base, engine: { ...base.engine, mode: "target-only" } });
          const run = await runCase(testCase);
          const laws = await checkRun(testCase, run, targetOnly);
          const summary = summarize(testCase, run, targetOnly, laws);
          const where = `${draft} N=${numDraftTokens} ${JSON.stringify(variant)}`;
          // A tie would legitimately break full acceptance and is reported in summary.ties; none occurs here.
          expect(summary.ties, where).toBe(0);
          expect(summary.fullAcceptRate, where).toBe(1);
          expect(summary.lossless, where).toBe(true);
          expect(
            laws.filter((law) => law.status === "fails"),
            where,
          ).toEqual([]);
        }
      });
    }
  }
});
