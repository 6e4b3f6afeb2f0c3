// The issue-2 matrix: the mirror accepts every draft and is lossless for every chunk size, page size
// and S; the EAGLE head and the tapped mirror satisfy lossless, acceptance correctness and draft reference.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import type { Case } from "../../src/case/case.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import { summarize } from "../../src/cli/run-summary.ts";
import type { DraftKind } from "../../src/model/spec.ts";

async function runBoth(testCase: Case) {
  const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
  const speculative = await runCase(testCase);
  const laws = await checkRun(testCase, speculative, targetOnly);
  return { summary: summarize(testCase, speculative, targetOnly, laws), laws, speculative };
}

function caseFor(draft: DraftKind, numSteps: number, chunkSize: number | null, pageSize: number, seed = 1): Case {
  return defaultCase({
    preset: "tiny",
    draft,
    seed,
    numRequests: 3,
    maxNewTokens: 12,
    engine: { numSteps, numDraftTokens: numSteps + 1, chunkSize, pageSize },
  });
}

describe("mirror draft: full acceptance and lossless", () => {
  const chunks = [1, 3, 7, null];
  const pages = [1, 4];
  for (const numSteps of [1, 2, 3, 4, 5]) {
    it(`S=${numSteps} over chunk sizes ${chunks.join("/")} and page sizes ${pages.join("/")}`, async () => {
      for (const chunkSize of chunks) {
        for (const pageSize of pages) {
          const { summary, laws } = await runBoth(caseFor("mirror", numSteps, chunkSize, pageSize));
          const where = `chunk ${chunkSize} page ${pageSize}`;
          // A tie would be legitimate, and is reported; none occurs with these seeds, so full acceptance is exact.
          expect(summary.ties, where).toBe(0);
          expect(summary.fullAcceptRate, where).toBe(1);
          expect(summary.lossless, where).toBe(true);
          expect(
            laws.filter((law) => law.status === "fails"),
            where,
          ).toEqual([]);
        }
      }
    });
  }
});

describe("hidden-state sensitive drafts", () => {
  for (const draft of ["eagle", "tapped-mirror", "noisy-mirror"] as const) {
    it(`${draft}: lossless, acceptance correct, draft reference, chunked and paged`, async () => {
      for (const [chunkSize, pageSize] of [
        [null, 1],
        [3, 4],
      ] as const) {
        const { summary, laws } = await runBoth(caseFor(draft, 3, chunkSize, pageSize, 2));
        expect(summary.lossless).toBe(true);
        expect(summary.acceptanceCorrect).toBe(true);
        expect(summary.draftReference).toBe(true);
        expect(laws.filter((law) => law.status === "fails")).toEqual([]);
      }
    });
  }

  it("the noisy mirror rejects drafts (rejection paths are exercised)", async () => {
    const { summary } = await runBoth(caseFor("noisy-mirror", 4, 3, 4, 3));
    expect(summary.acceptLenHistogram.slice(1, 5).some((count) => count > 0)).toBe(true);
  });
});

describe("float64", () => {
  it("mirror on tiny-f64 accepts everything", async () => {
    const testCase: Case = { ...caseFor("mirror", 3, 3, 2), model: { preset: "tiny-f64" } };
    const { summary } = await runBoth(testCase);
    expect(summary.fullAcceptRate).toBe(1);
    expect(summary.lossless).toBe(true);
    expect(summary.draftReference).toBe(true);
  });
});
