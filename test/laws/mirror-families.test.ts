// The mirror of each issue-29 family accepts every draft: on the swa presets (sliding windows with YaRN and
// linear RoPE scaling) the mirror, tapped mirror, EAGLE-3 mirror (chains and trees) and multi-layer mirror
// modules, on the hybrid presets (Mamba2 blocks) the mirror and tapped mirror (chains, trees, overlap), accept
// all S drafts in every round not cut by EOS or the cap, and mirror acceptance holds on rounds it checked. The
// mode tables of docs/benchmarks.md (scripts/mirror-modes.ts --presets swa,swa-f64 and --presets
// hybrid,hybrid-f64) measure the same over generated cases; this keeps it true in CI.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import type { EngineConfig } from "../../src/case/engine-config.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { acceptanceStats } from "../../src/laws/mirror-acceptance.ts";
import type { DraftKind } from "../../src/model/spec.ts";
import { checkRun } from "../helpers/check-run.ts";

const CASES: { preset: string; draft: DraftKind; engine: Partial<EngineConfig> }[] = [
  { preset: "swa", draft: "mirror", engine: {} },
  { preset: "swa", draft: "tapped-mirror", engine: { topk: 2, numDraftTokens: 6 } },
  { preset: "swa", draft: "eagle3-mirror", engine: {} },
  { preset: "swa-f64", draft: "mirror", engine: { multiLayer: true } },
  { preset: "swa-f64", draft: "tapped-mirror", engine: { graphReplay: true } },
  // Hybrid models: the mirror's recurrent state follows the target's (its initial state is after BOS).
  { preset: "hybrid", draft: "mirror", engine: {} },
  { preset: "hybrid", draft: "tapped-mirror", engine: { topk: 2, numDraftTokens: 6 } },
  { preset: "hybrid-f64", draft: "mirror", engine: { overlap: true } },
];

describe("mirror drafts of the sliding-window, scaled-RoPE families accept everything", () => {
  for (const { preset, draft, engine } of CASES) {
    it(`${preset}, ${draft} ${JSON.stringify(engine)}`, async () => {
      const testCase = defaultCase({
        preset,
        draft,
        seed: 7,
        numRequests: 2,
        maxNewTokens: 14,
        engine: { numSteps: 3, numDraftTokens: 4, chunkSize: 3, ...engine },
      });
      const run = await runCase(testCase);
      const stats = acceptanceStats(run.trace, testCase.engine.numSteps);
      expect(stats.uncutRounds).toBeGreaterThan(0);
      expect(stats.fullAcceptRounds).toBe(stats.uncutRounds);
      const targetOnly = await runCase({ ...testCase, engine: { ...testCase.engine, mode: "target-only" } });
      const verdicts = await checkRun(testCase, run, targetOnly);
      const mirror = verdicts.find((verdict) => verdict.law === "mirror acceptance")!;
      expect(mirror.status).toBe("holds");
      expect(mirror.checked).toBeGreaterThan(0);
      expect(verdicts.filter((verdict) => verdict.status === "fails").map((verdict) => verdict.law)).toEqual([]);
    });
  }
});
