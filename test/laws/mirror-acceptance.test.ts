// Mirror acceptance from outputs alone (an engine without traces): the reference's own accept lengths
// hold, in both round conventions; moving one accepted draft from a round to the next fails with the
// place; the last round of a finished request is excused.
import { describe, expect, it } from "vitest";
import { runCase } from "../../src/engine/run-case.ts";
import type { RequestOutput } from "../../src/trace/run-result.ts";
import { checkMirrorAcceptanceFromOutputs } from "../../src/laws/mirror-acceptance.ts";
import { referenceSource } from "../../src/sources/reference.ts";
import { goldenCase } from "../helpers/golden-runs.ts";

describe("mirror acceptance from outputs", async () => {
  const testCase = goldenCase("tiny-mirror", "unchunked").case;
  const run = await runCase(testCase);
  const oracle = await referenceSource().oracle(testCase);
  const prompts = new Map(testCase.workload.requests.map((request) => [request.id, request.prompt]));
  const S = testCase.engine.numSteps;
  const check = (outputs: RequestOutput[]) => checkMirrorAcceptanceFromOutputs(outputs, prompts, S, oracle);
  const multiRound = run.outputs.find((output) => output.acceptLens.length >= 3)!;

  it("holds on the reference engine's accept lengths", async () => {
    expect(multiRound, "the golden case should have a request with 3+ rounds").toBeDefined();
    const result = await check(run.outputs);
    expect(result.status).toBe("holds");
    expect(result.checked).toBeGreaterThan(0);
  });

  it("fails where a round accepted fewer drafts than a mirror must, and names the token", async () => {
    const lens = [...multiRound.acceptLens];
    lens[0] -= 1;
    lens[1] += 1;
    const result = await check([{ ...multiRound, acceptLens: lens }]);
    expect(result.status).toBe("fails");
    expect(result.violation).toMatchObject({ request: multiRound.id, got: S, expected: S + 1, index: S });
  });

  it("reads rounds that include the first token (assisted generation) one token earlier", async () => {
    // The same tokens in rounds starting at token 0: the first round covers token 0 plus the old first round.
    const shifted = { ...multiRound, acceptLens: [1, ...multiRound.acceptLens], roundsIncludeFirstToken: true };
    const result = await check([shifted]);
    expect(result.status).toBe("fails"); // the 1-token first round is under-accepted
    expect(result.violation?.index).toBe(0);
  });

  it("excuses the last round of a finished request", async () => {
    const lens = [...multiRound.acceptLens];
    lens[lens.length - 1] = 1;
    const result = await check([{ ...multiRound, acceptLens: lens }]);
    expect(result.status).toBe("holds");
  });
});
