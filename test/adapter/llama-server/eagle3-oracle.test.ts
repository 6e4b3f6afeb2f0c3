// The EAGLE-3 oracle (src/model/eagle3-oracle.ts) on llama.cpp's own server: its GGUF (llama.cpp's eagle3
// architecture, src/export/gguf-eagle3.ts) drafts the bigram target's greedy chain, so every round of a request run
// alone accepts all S drafts, at S = 1, 4 and 8, and law "mirror acceptance" holds. Requests run together accept
// every draft too once the server's two EAGLE-3 batch defects are switched off (--no-spec-draft-backend-sampling,
// --kv-unified: docs/llama-server.md, "EAGLE-3 in llama.cpp's format").
import { beforeAll, describe, expect, it } from "vitest";
import type { Case } from "../../../src/case/case.ts";
import { buildBinary } from "../../../src/adapter/llama-server/binary.ts";
import { checkLaws } from "../../../src/check/runner.ts";
import { MIRROR_ACCEPTANCE } from "../../../src/laws/mirror-acceptance.ts";
import { defaultDraftSpec } from "../../../src/model/spec.ts";
import { ExternalSource } from "../../../src/sources/external.ts";

const COMMAND = "node bin/specconf.js engine llama-server";
const PROMPTS = [
  [1, 5, 9, 13, 17, 20, 31],
  [1, 5, 9, 13, 17, 40],
  [1, 5, 9, 13, 17, 7, 8, 9],
];

beforeAll(async () => {
  await buildBinary({ log: (text) => process.stderr.write(text) });
}, 1_800_000);

function oracleCase(steps: number, prompts: number[][]): Case {
  return {
    formatVersion: 1,
    model: { preset: "bigram" },
    draft: { ...defaultDraftSpec("eagle3"), oracle: true },
    engine: {
      mode: "speculative",
      numSteps: steps,
      topk: 1,
      numDraftTokens: steps + 1,
      chunkSize: null,
      pageSize: 1,
      tokenBudget: 256,
      poolSlots: 256,
      faults: [],
      runtime: { ep: "cpu", threads: 1, graphOptimizationLevel: "basic" },
    },
    workload: {
      requests: prompts.map((prompt, id) => ({ id, prompt, maxNewTokens: 40, arrivalStep: 0 })),
      aborts: [],
    },
  };
}

/** Every round that did not end its request accepted all S drafts; returns how many rounds there were. */
async function expectEveryDraftAccepted(source: ExternalSource, testCase: Case): Promise<number> {
  const check = await checkLaws(source, testCase);
  const verdict = check.results.find((result) => result.law === MIRROR_ACCEPTANCE);
  expect(verdict?.status, JSON.stringify(verdict)).toBe("holds");
  const lens = check.run!.outputs.flatMap((output) => output.acceptLens.slice(0, -1));
  expect(
    lens.every((len) => len === testCase.engine.numSteps + 1),
    `${lens}`,
  ).toBe(true);
  return lens.length;
}

describe("the EAGLE-3 oracle on llama-server", () => {
  it("accepts every draft of a request run alone, at S = 1, 4 and 8", { timeout: 240_000 }, async () => {
    const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
    try {
      for (const steps of [1, 4, 8])
        for (const prompt of PROMPTS)
          expect(await expectEveryDraftAccepted(source, oracleCase(steps, [prompt]))).toBeGreaterThan(0);
    } finally {
      await source.close();
    }
  });

  it("accepts every draft of requests run together with both batch defects off", { timeout: 240_000 }, async () => {
    const flags = "--server-flag=--no-spec-draft-backend-sampling --server-flag=--kv-unified";
    const source = await ExternalSource.start(`${COMMAND} ${flags}`, { timeoutMs: 60_000 });
    try {
      for (const steps of [1, 3])
        expect(await expectEveryDraftAccepted(source, oracleCase(steps, PROMPTS))).toBeGreaterThan(0);
    } finally {
      await source.close();
    }
  });
});
