// The bigram family and the EAGLE-3 oracle (src/model/bigram.ts, eagle3-oracle.ts) against the float64 forward:
// a bigram target's streams and logits at a position are its token's wherever it stands; the oracle head drafts
// the target's greedy chain for every token at every position; and it reads the drafts from every auxiliary
// state in order: states misordered, read one layer late, or taken from the next position lose the first draft.
import { describe, expect, it } from "vitest";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { buildDraft, buildTarget } from "../../src/model/build.ts";
import { bigramTable, type BigramTable } from "../../src/model/bigram-table.ts";
import { referenceEagle3 } from "../../src/model/eagle3-reference.ts";
import { getPreset } from "../../src/model/presets.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { SELF_ATTENTION_GAP } from "../../src/model/self-attention.ts";
import { defaultDraftSpec, SpecError, validateEagle3Options, validateModelSpec } from "../../src/model/spec.ts";
import { draftToTarget, type Eagle3Weights } from "../../src/model/weights.ts";

const spec = getPreset("bigram");
const target = buildTarget(spec, true);
const table = bigramTable(spec, target.weights);

function oracle(normBeforeFc: boolean): { head: Eagle3Weights; layers: number[] } {
  const draft = buildDraft(target, { ...defaultDraftSpec("eagle3", 1, { normBeforeFc }), oracle: true });
  return { head: draft.eagle3Head!, layers: draft.eagle3!.options.auxLayers };
}

function argmax(values: Float64Array, offset: number, count: number): number {
  let best = 0;
  for (let i = 1; i < count; i++) if (values[offset + i] > values[offset + best]) best = i;
  return best;
}

/** Token u's auxiliary states, each read from the stream `streamOf(layer, slot)` of token `tokenOf(slot)`. */
function auxOf(layers: number[], streamOf: (slot: number) => number, tokenOf: (slot: number) => number): Float64Array {
  const aux = new Float64Array(layers.length * spec.hidden);
  layers.forEach((_, slot) => aux.set(table.streams[streamOf(slot)][tokenOf(slot)], slot * spec.hidden));
  return aux;
}

/**
 * The head's drafts from one seed row (the root and the states of the position before it), `steps` steps of one
 * causal sequence after `context` earlier rows (other tokens, other states) at scattered positions.
 */
function drafts(head: Eagle3Weights, root: number, aux: Float64Array, steps: number, context: number[]): number[] {
  const toTarget = draftToTarget(head.d2t);
  const width = aux.length;
  const tokens = [...context, root];
  // Earlier rows: other tokens with states of their own (any values: the oracle attends only its own row).
  const auxRows = [...context.flatMap((t) => new Array(width).fill(0.25 + t / spec.vocab)), ...aux];
  const hiddenRows: number[] = new Array(tokens.length * spec.hidden).fill(0);
  const positions = tokens.map((_, i) => 3 + 7 * i);
  const out: number[] = [];
  for (let step = 0; step < steps; step++) {
    const result = referenceEagle3(
      spec,
      target.weights,
      head,
      tokens,
      Float64Array.from(auxRows),
      Float64Array.from(hiddenRows),
      positions,
    );
    const row = tokens.length - 1;
    const drafted = toTarget[argmax(result.logits, row * spec.vocab, spec.vocab)];
    out.push(drafted);
    tokens.push(drafted);
    auxRows.push(...new Array(width).fill(0));
    hiddenRows.push(...result.hidden.subarray(row * spec.hidden, (row + 1) * spec.hidden));
    positions.push(positions[row] + 1);
  }
  return out;
}

function chain(table: BigramTable, from: number, steps: number): number[] {
  const out: number[] = [];
  for (let token = from; out.length < steps; token = table.next[token]) out.push(table.next[token]);
  return out;
}

describe("bigram target", () => {
  it("has each position's streams and logits from its token alone, at any position and after any tokens", () => {
    const rng = xoroshiro128plus(5);
    const tokens = Array.from({ length: 40 }, () => uniformInt(rng, 0, spec.vocab - 1));
    const run = referenceTarget(spec, target.weights, tokens);
    tokens.forEach((token, row) => {
      for (let k = 0; k <= spec.layers; k++) {
        const stream = run.streams[k].subarray(row * spec.hidden, (row + 1) * spec.hidden);
        stream.forEach((v, c) => expect(Math.abs(v - table.streams[k][token][c])).toBeLessThan(1e-12));
      }
      expect(argmax(run.logits, row * spec.vocab, spec.vocab)).toBe(table.next[token]);
    });
  });

  it("has no near-tie in its next-token table (the preset's seed), and is refused where it cannot be built", () => {
    expect(Math.min(...table.margin)).toBeGreaterThan(0.05);
    expect(() => validateModelSpec({ ...spec, hidden: spec.vocab })).toThrow(/bigram: needs hidden >= vocab \+ 1/);
    expect(() => validateEagle3Options(getPreset("tiny"), { ...defaultDraftSpec("eagle3"), oracle: true })).toThrow(
      SpecError,
    );
  });
});

describe("EAGLE-3 oracle", () => {
  for (const normBeforeFc of [false, true]) {
    it(`drafts the greedy chain from every token, 5 steps (norm_before_fc ${normBeforeFc})`, () => {
      const { head, layers } = oracle(normBeforeFc);
      for (let u = 0; u < spec.vocab; u++) {
        const aux = auxOf(
          layers,
          (slot) => layers[slot],
          () => u,
        );
        const context = [(u * 7) % spec.vocab, (u * 13 + 5) % spec.vocab];
        expect(drafts(head, table.next[u], aux, 5, context), `token ${u}`).toEqual(chain(table, table.next[u], 5));
      }
    });
  }

  it("loses the first draft when its states are misordered, read one layer late, or from the next position", () => {
    const { head, layers } = oracle(false);
    const firstRight = (auxFor: (u: number) => Float64Array) => {
      let right = 0;
      for (let u = 0; u < spec.vocab; u++)
        if (drafts(head, table.next[u], auxFor(u), 1, [])[0] === table.next[table.next[u]]) right += 1;
      return right / spec.vocab;
    };
    expect(
      firstRight((u) =>
        auxOf(
          layers,
          (slot) => layers[slot],
          () => u,
        ),
      ),
    ).toBe(1);
    for (const order of [
      [1, 0, 2],
      [0, 2, 1],
      [2, 1, 0],
      [1, 2, 0],
      [2, 0, 1],
    ])
      expect(
        firstRight((u) =>
          auxOf(
            layers,
            (slot) => layers[order[slot]],
            () => u,
          ),
        ),
        `order ${order}`,
      ).toBeLessThan(0.5);
    expect(
      firstRight((u) =>
        auxOf(
          layers,
          (slot) => layers[slot] + 1,
          () => u,
        ),
      ),
      "one layer late",
    ).toBeLessThan(0.5);
    expect(
      firstRight((u) =>
        auxOf(
          layers,
          (slot) => layers[slot],
          () => table.next[u],
        ),
      ),
      "next position",
    ).toBeLessThan(0.5);
  });

  it("attends only its own row: every other position within the context scores >= the gap below the diagonal", () => {
    const { head } = oracle(false);
    const { headDim, heads, ropeTheta } = spec;
    const half = headDim / 2;
    // The constant channel's query and key, per head (the only nonzero row of wq and wk the embedding reaches).
    const embedRms = Math.sqrt(2 / spec.hidden + spec.rmsEps);
    const q = Array.from({ length: heads * headDim }, (_, c) => head.layer.wq[c] / embedRms);
    const k = Array.from({ length: spec.kvHeads * headDim }, (_, c) => head.layer.wk[c] / embedRms);
    let minGap = Infinity;
    for (let distance = 1; distance < spec.maxPositions; distance++)
      for (let h = 0; h < heads; h++) {
        const g = Math.floor(h / (heads / spec.kvHeads));
        let diagonal = 0;
        let off = 0;
        for (let i = 0; i < half; i++) {
          const angle = distance * Math.pow(ropeTheta, (-2 * i) / headDim);
          const [qa, qb, ka, kb] = [
            q[h * headDim + i],
            q[h * headDim + i + half],
            k[g * headDim + i],
            k[g * headDim + i + half],
          ];
          diagonal += qa * ka + qb * kb;
          off += (qa * ka + qb * kb) * Math.cos(angle) + (qb * ka - qa * kb) * Math.sin(angle);
        }
        minGap = Math.min(minGap, (diagonal - off) / Math.sqrt(headDim));
      }
    expect(minGap).toBeGreaterThanOrEqual(SELF_ATTENTION_GAP * 0.999);
    expect(Math.fround(Math.exp(-SELF_ATTENTION_GAP))).toBe(0);
  });
});
