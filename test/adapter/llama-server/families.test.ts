// Issue 29's families through llama-server, with its standalone mirror draft: the golden suite swa-mirror (layer 0
// attends a window of 4 positions, YaRN-scaled RoPE) exported as granite_swa (src/export/gguf-families.ts), and
// hybrid-mirror's case on a hybrid whose Mamba2 blocks are twice the model's width (the only width llama.cpp's
// granitehybrid loads; the preset's own is refused) exported as granitehybrid. Greedy tokens must be the golden /
// reference ones, speculation lossless, and every round of the exact-copy draft must accept all S drafts: a key
// or tensor the export got wrong changes the tokens (a window widened or RoPE scaling dropped fails reference
// decode), a rollback that keeps a rejected state or loses the window breaks losslessness.
import { beforeAll, describe, expect, it } from "vitest";
import { buildBinary } from "../../../src/adapter/llama-server/binary.ts";
import { checkLaws } from "../../../src/check/runner.ts";
import { ExternalSource } from "../../../src/sources/external.ts";
import { golden } from "../../helpers/golden-runs.ts";
import type { Case } from "../../../src/case/case.ts";
import type { ModelSpec } from "../../../src/model/spec.ts";

const COMMAND = "node bin/specconf.js engine llama-server";

beforeAll(async () => {
  await buildBinary({ log: (text) => process.stderr.write(text) });
}, 1_800_000);

describe("llama-server on the sliding-window family", () => {
  it("swa-mirror: golden tokens, lossless, every mirror draft accepted", { timeout: 120_000 }, async () => {
    const suite = golden("swa-mirror");
    const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
    try {
      const testCase = suite.cases[0].case;
      const check = await checkLaws(source, testCase);
      expect(check.skipped).toBeUndefined();
      expect(check.crash).toBeUndefined();
      const status = new Map(check.results.map((result) => [result.law, result.status]));
      for (const law of ["reference decode", "lossless", "mirror acceptance"])
        expect(status.get(law), law).toBe("holds");
      expect(check.results.filter((result) => result.status === "fails")).toEqual([]);
      const run = await source.run(testCase);
      for (const expected of suite.cases[0].expected.requests) {
        const output = run.outputs.find((candidate) => candidate.id === expected.id)!;
        expect(output.tokens, `request ${expected.id}`).toEqual(expected.tokens);
        // The server stops drafting when fewer than S tokens fit before max tokens: full rounds only.
        expect(output.acceptLens!.length).toBeGreaterThan(0);
        expect(output.acceptLens!.every((len) => len === testCase.engine.numSteps + 1)).toBe(true);
      }
    } finally {
      await source.close();
    }
  });

  it(
    "a hybrid of double-width Mamba2 blocks (granitehybrid): reference tokens, lossless, every draft accepted",
    { timeout: 120_000 },
    async () => {
      const base = golden("hybrid-mirror").cases[0].case;
      const spec = (base.model as { spec: ModelSpec }).spec;
      const wide: ModelSpec = {
        ...spec,
        name: "hybrid-wide",
        recurrent: { ...spec.recurrent!, heads: 2 * spec.recurrent!.heads },
      };
      const testCase: Case = { ...base, model: { spec: wide } };
      const source = await ExternalSource.start(COMMAND, { timeoutMs: 60_000 });
      try {
        const check = await checkLaws(source, testCase);
        expect(check.crash).toBeUndefined();
        const status = new Map(check.results.map((result) => [result.law, result.status]));
        for (const law of ["reference decode", "lossless", "mirror acceptance"])
          expect(status.get(law), law).toBe("holds");
        expect(check.results.filter((result) => result.status === "fails")).toEqual([]);
      } finally {
        await source.close();
      }
    },
  );
});
