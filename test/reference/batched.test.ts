// The packed references (reference/batched.ts) against the one-forward-per-row references
// (reference/cache-free.ts) on generated runs: every row the laws read (teacher-forced targets, draft
// rows of chains and trees, multi-layer module rows) agrees, argmax exactly (unless the row is a tie) and
// logits to within rounding. A wrong mask, position, token or hidden input in the packing changes logits
// by O(1) units of the logit scale; batch shapes alone move them by ~1e-6 (float32) or ~1e-14 (float64).
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { loadModels } from "../../src/case/models.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkDraftReference } from "../../src/laws/draft-reference.ts";
import { checkReferenceDecode } from "../../src/laws/reference-decode.ts";
import { ReferenceOracle } from "../../src/reference/oracle.ts";
import { packedMask } from "../../src/reference/packed.ts";
import type { RowPrediction } from "../../src/reference/cache-free.ts";
import { caseArbitrary } from "../../src/properties/arbitraries/case.ts";
import { FULL_SPACE, space } from "../../src/properties/arbitraries/space.ts";

/** Relative logit error allowed between batch shapes, per dtype (observed maxima are printed below). */
const RELATIVE = { float32: 1e-5, float64: 1e-11 };
const observed = new Map<string, number>();

afterAll(() => {
  const lines = [...observed.entries()].map(([key, value]) => `  ${key.padEnd(24)} ${value.toExponential(2)}`);
  console.log(`max relative logit difference, packed vs per-row:\n${lines.join("\n")}`);
});

function expectSameRow(
  what: string,
  dtype: "float32" | "float64",
  epsilon: number,
  packed: RowPrediction,
  perRow: RowPrediction,
  scale: number,
): void {
  const relative = Math.abs(packed.topLogit - perRow.topLogit) / Math.max(Math.abs(perRow.topLogit), scale);
  const key = `${dtype} ${what}`;
  observed.set(key, Math.max(observed.get(key) ?? 0, relative));
  if (packed.argmax !== perRow.argmax) {
    expect(Math.min(packed.margin, perRow.margin), `${what}: argmax differs outside a tie`).toBeLessThan(epsilon);
    return;
  }
  expect(relative, `${what}: top logit ${packed.topLogit} vs ${perRow.topLogit}`).toBeLessThan(RELATIVE[dtype]);
  expect(Math.abs(packed.margin - perRow.margin) / scale, `${what}: margin`).toBeLessThan(RELATIVE[dtype] * 10);
}

/** Every reference the draft-reference and reference-decode laws read, from both oracles. */
async function compareReferences(testCase: Case): Promise<number> {
  const run = await runCase(testCase);
  const models = loadModels(testCase);
  const packed = await ReferenceOracle.create(models, testCase.engine.runtime, "packed");
  const perRow = await ReferenceOracle.create(models, testCase.engine.runtime, "per-row");
  const targetCalls = vi.spyOn(packed, "targetOver");
  const draftCalls = vi.spyOn(packed, "draftRow");
  const moduleCalls = vi.spyOn(packed, "moduleRow");
  await checkReferenceDecode(run.trace.requests, packed);
  await checkDraftReference(run.trace, packed, testCase.draft?.kind);
  // What the laws asked for (copied: the comparisons below call the same methods).
  const targetQueries = targetCalls.mock.calls.slice();
  const draftQueries = draftCalls.mock.calls.slice();
  const moduleQueries = moduleCalls.mock.calls.slice();
  vi.restoreAllMocks();
  let compared = 0;
  const dtype = models.spec.dtype;
  const draftScale = packed.draftEpsilon / packed.epsilon;
  for (const [tokens] of targetQueries) {
    const a = await packed.targetOver(tokens);
    const b = await perRow.targetOver(tokens);
    a.predictions.forEach((prediction, p) =>
      expectSameRow("target", dtype, packed.epsilon, prediction, b.predictions[p], 1),
    );
    compared += a.predictions.length;
  }
  for (const [sequence, root, path] of draftQueries) {
    const a = await packed.draftRow(sequence, root, path);
    const b = await perRow.draftRow(sequence, root, path);
    expectSameRow(`draft depth ${path.length}`, dtype, packed.draftEpsilon, a.prediction, b.prediction, draftScale);
    compared += 1;
  }
  for (const [sequence, module, lastAnchor, root, drafts] of moduleQueries) {
    const a = await packed.moduleRow(sequence, module, lastAnchor, root, drafts);
    const b = await perRow.moduleRow(sequence, module, lastAnchor, root, drafts);
    expectSameRow(`module ${module}`, dtype, packed.draftEpsilon, a, b, draftScale);
    compared += 1;
  }
  return compared;
}

describe("packed references", () => {
  it("mask: each row sees its range, its listed rows and itself, nothing else", () => {
    const mask = packedMask(
      [
        { token: 1, position: 0, attendRange: [0, 0] },
        { token: 2, position: 1, attendRange: [0, 1] },
        { token: 3, position: 2, attendRange: [0, 1], attendRows: [] },
        { token: 4, position: 3, attendRange: [0, 1], attendRows: [2] },
      ],
      "float64",
    );
    const seen = (row: number) => [0, 1, 2, 3].filter((column) => mask[row * 4 + column] === 0);
    expect([0, 1, 2, 3].map(seen)).toEqual([[0], [0, 1], [0, 2], [0, 2, 3]]);
  });

  const spaces = {
    "the whole space": FULL_SPACE,
    trees: space({ topks: [2, 4], steps: { min: 2, max: 5 }, requests: { min: 2, max: 3 }, multiLayer: [false] }),
    "multi-layer": space({ topks: [1], multiLayer: [true], drafts: ["mirror", "tapped-mirror", "noisy-mirror"] }),
    // Anchor rows fed auxiliary states (hidden zero), path rows the draft's hidden (aux zero), d2t-mapped argmaxes.
    "EAGLE-3": space({ drafts: ["eagle3", "eagle3-mirror"], steps: { min: 2, max: 4 }, topks: [1, 2] }),
  };
  for (const [name, caseSpace] of Object.entries(spaces)) {
    it(`agree with the per-row references on generated runs: ${name}`, { timeout: 120_000 }, async () => {
      let compared = 0;
      for (const testCase of fc.sample(caseArbitrary(caseSpace), { seed: 5, numRuns: 12 }))
        compared += await compareReferences(testCase);
      expect(compared).toBeGreaterThan(100);
    });
  }
});
