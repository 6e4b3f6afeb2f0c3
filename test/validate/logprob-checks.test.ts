// The logprobs output check against golden files: the reference engine's entries hold, a changed value
// or alternative fails at its token, an alternative swapped at a golden boundary tie is a tie, and
// entries after the token comparison stopped are not judged.
import { describe, expect, it } from "vitest";
import type { GoldenRequest } from "../../src/golden/schema.ts";
import { checkGoldenLogprobs } from "../../src/validate/logprob-checks.ts";
import type { ReportedOutput } from "../../src/trace/outputs-line.ts";
import { goldenCase, reference } from "../helpers/golden-runs.ts";

const EPSILON = 1e-4;

describe("logprobs check", async () => {
  const golden = goldenCase("tiny-mirror", "sampling").expected.requests;
  const run = await reference("tiny-mirror", "sampling");
  const pairs = golden.map((request) => ({ request, output: run.lines.find((line) => line.id === request.id)! }));
  const withTop = pairs.find(({ request }) => request.logprobs![0].top.length >= 2)!;

  it("holds on the reference engine's outputs", () => {
    for (const { request, output } of pairs) {
      const result = checkGoldenLogprobs(request, output, EPSILON, undefined);
      expect(result.status, result.violation?.message).toBe("holds");
      expect(result.checked).toBe(request.tokens.length);
    }
  });

  it("fails on a value off by epsilon and on a foreign alternative, naming the token", () => {
    const { request, output } = withTop;
    const entries = output.logprobs!;
    const shifted = entries.map((entry, i) => (i === 1 ? { ...entry, logprob: entry.logprob - 2 * EPSILON } : entry));
    expect(checkGoldenLogprobs(request, { ...output, logprobs: shifted }, EPSILON, undefined).violation).toMatchObject({
      index: 1,
    });
    const outsider = entries[0].top.length;
    const foreign = entries.map((entry, i) =>
      i === 0 ? { ...entry, top: [...entry.top.slice(0, -1), { token: 63, logprob: -30 }] } : entry,
    );
    const verdict = checkGoldenLogprobs(request, { ...output, logprobs: foreign }, EPSILON, undefined);
    expect(verdict.violation?.message).toMatch(new RegExp(`not among the golden top ${outsider}`));
  });

  it("does not judge entries after the token comparison stopped", () => {
    const { request, output } = withTop;
    const broken = output.logprobs!.map((entry, i) => (i >= 2 ? { ...entry, logprob: 0 } : entry));
    expect(checkGoldenLogprobs(request, { ...output, logprobs: broken }, EPSILON, 2)).toMatchObject({
      status: "holds",
      checked: 2,
    });
  });

  it("an alternative swapped where the golden k-th and (k+1)-th logprobs tie is a tie", () => {
    const request: GoldenRequest = {
      id: 0,
      tokens: [5],
      margins: [1],
      finishReason: "length",
      rounds: [],
      logprobs: [
        {
          logprob: -0.5,
          top: [
            { token: 5, logprob: -0.5 },
            { token: 6, logprob: -2 },
          ],
          next: -2 + EPSILON / 2,
        },
      ],
    };
    const output = (alternative: number, logprob: number): ReportedOutput => ({
      id: 0,
      tokens: [5],
      logprobs: [
        {
          token: 5,
          logprob: -0.5,
          top: [
            { token: 5, logprob: -0.5 },
            { token: alternative, logprob },
          ],
        },
      ],
    });
    expect(checkGoldenLogprobs(request, output(7, -2 + EPSILON / 2), EPSILON, undefined)).toMatchObject({
      status: "holds",
      ties: 1,
    });
    expect(checkGoldenLogprobs(request, output(7, -3), EPSILON, undefined).status).toBe("fails");
    expect(
      checkGoldenLogprobs(
        { ...request, logprobs: [{ ...request.logprobs![0], next: -3 }] },
        output(7, -2),
        EPSILON,
        undefined,
      ).status,
    ).toBe("fails");
  });
});
