// The text layer's vocabulary (src/model/vocabulary.ts): deterministic per spec, unique non-empty pieces over the
// safe characters, empty control tokens, merges whose halves are pieces, and texts with several tokenizations
// (a piece equal to two others concatenated), for every preset and for generated specs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PRESETS } from "../../src/model/presets.ts";
import {
  detokenize,
  MAX_PIECE_LENGTH,
  PIECE_CHARACTERS,
  pieceEnds,
  vocabularyOf,
  type VocabularySpec,
} from "../../src/model/vocabulary.ts";

function checkVocabulary(spec: VocabularySpec): void {
  const vocabulary = vocabularyOf(spec);
  const { pieces } = vocabulary;
  expect(pieces).toHaveLength(spec.vocab);
  const normal = pieces.filter((_, id) => id !== spec.bosId && id !== spec.eosId);
  expect(pieces[spec.bosId]).toBe("");
  expect(pieces[spec.eosId]).toBe("");
  expect(new Set(normal).size).toBe(normal.length);
  const allowed = new Set(PIECE_CHARACTERS);
  const bad = normal.filter(
    (piece) => piece.length === 0 || piece.length > MAX_PIECE_LENGTH || [...piece].some((c) => !allowed.has(c)),
  );
  expect(bad).toEqual([]);
  const known = new Set(normal);
  const badMerges = vocabulary.merges.filter(
    ([left, right]) => !known.has(left) || !known.has(right) || !known.has(left + right),
  );
  expect(badMerges).toEqual([]);
  expect(vocabulary.merges).toHaveLength(normal.length - vocabulary.alphabet.length);
  for (const character of vocabulary.alphabet) expect(known.has(character)).toBe(true);
}

describe("vocabularyOf", () => {
  it.each(Object.values(PRESETS))("builds the $name preset's vocabulary", (spec) => {
    checkVocabulary(spec);
    // Token and text boundaries disagree: some piece is two other pieces concatenated.
    expect(vocabularyOf(spec).merges.length).toBeGreaterThan(0);
  });

  it("is deterministic and depends on the seed", () => {
    const spec = PRESETS.tiny;
    // A fresh computation (not the memo) gives the same pieces.
    const again = vocabularyOf({ ...spec, vocab: spec.vocab, seed: spec.seed });
    expect(again.pieces).toEqual(vocabularyOf(spec).pieces);
    expect(vocabularyOf({ ...spec, seed: spec.seed + 1 }).pieces).not.toEqual(vocabularyOf(spec).pieces);
  });

  it("holds for generated specs", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 3000 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.nat(),
        fc.nat(),
        (vocab, seed, bos, eos) => checkVocabulary({ vocab, seed, bosId: bos % vocab, eosId: eos % vocab }),
      ),
      { numRuns: 60 },
    );
  });
});

describe("detokenize and pieceEnds", () => {
  it("concatenate pieces, control tokens adding nothing", () => {
    const spec = PRESETS.tiny;
    const vocabulary = vocabularyOf(spec);
    const tokens = [spec.bosId, 3, 4, spec.eosId, 5];
    const expected = [3, 4, 5].map((token) => vocabulary.pieces[token]).join("");
    expect(detokenize(vocabulary, tokens)).toBe(expected);
    const ends = pieceEnds(vocabulary, tokens);
    expect(ends[0]).toBe(0);
    expect(ends[2]).toBe(vocabulary.pieces[3].length + vocabulary.pieces[4].length);
    expect(ends[3]).toBe(ends[2]);
    expect(ends[4]).toBe(expected.length);
  });
});
