// Graph replay equals eager execution event for event (tie-aware, logits within tolerance), in chain
// and tree drafting, chunked and paged; graphs are really captured once per shape and replayed.
import { describe, expect, it } from "vitest";
import { defaultCase } from "../../src/case/default-case.ts";
import { loadModels } from "../../src/case/models.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRun } from "../helpers/check-run.ts";
import { relativeTolerance } from "../../src/laws/draft-reference.ts";
import { ReferenceOracle } from "../../src/reference/oracle.ts";
import { checkReplayEquivalence } from "../../src/laws/replay-equivalence.ts";
import { Engine } from "../../src/engine/step-loop.ts";

describe("graph replay", () => {
  for (const [draft, numSteps, topk, numDraftTokens] of [
    ["mirror", 3, 1, 4],
    ["tapped-mirror", 4, 2, 6],
    ["eagle", 3, 4, 8],
  ] as const) {
    it(`${draft} S=${numSteps} K=${topk} N=${numDraftTokens}: replay equals eager and every law holds`, async () => {
      const eagerCase = defaultCase({
        preset: "tiny",
        draft,
        seed: 6,
        numRequests: 3,
        maxNewTokens: 12,
        engine: { numSteps, topk, numDraftTokens, chunkSize: 3, pageSize: 2 },
      });
      const replayCase = { ...eagerCase, engine: { ...eagerCase.engine, graphReplay: true } };
      const eager = await runCase(eagerCase);
      let replays = 0;
      let captures = 0;
      const replay = await runCase(replayCase, {
        onStep: (_, engine: Engine) => {
          replays = engine.context.graphReplay?.stats.replays ?? 0;
          captures = engine.context.graphReplay?.stats.captures ?? 0;
        },
      });
      expect(replays).toBeGreaterThan(captures);
      const oracle = await ReferenceOracle.create(loadModels(eagerCase), eagerCase.engine.runtime);
      const law = checkReplayEquivalence(eager.trace, replay.trace, {
        epsilon: oracle.draftEpsilon,
        absolute: oracle.draftEpsilon,
        relative: relativeTolerance(oracle),
      });
      expect(law.status).toBe("holds");
      expect(law.checked).toBe(eager.trace.events.length);
      const laws = await checkRun(replayCase, replay, eager);
      expect(laws.filter((result) => result.status === "fails")).toEqual([]);
    });
  }

  it("the law fails when replay ran other positions", async () => {
    const eagerCase = defaultCase({
      preset: "tiny",
      draft: "mirror",
      seed: 6,
      numRequests: 2,
      maxNewTokens: 8,
      engine: { numSteps: 3 },
    });
    const eager = await runCase(eagerCase);
    const broken = await runCase({
      ...eagerCase,
      engine: { ...eagerCase.engine, graphReplay: true, faults: ["positions-not-restored-after-capture"] },
    });
    const law = checkReplayEquivalence(eager.trace, broken.trace, { epsilon: 6.5, absolute: 6.5, relative: 1e-5 });
    expect(law.status).toBe("fails");
    expect(law.violation?.message).toMatch(/position/);
  });
});
