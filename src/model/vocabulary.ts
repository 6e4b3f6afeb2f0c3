// The text layer's vocabulary (issue 28, item 2): every generated model's token ids get multi-character
// strings, deterministic from the spec (seed, vocab, BOS and EOS), so stop strings, detokenization and streamed
// deltas can be checked. Servers see a multi-token accepted run as one unit of text (sglang#23802 / #27637: a
// stop string early in the run missed), so the vocabulary is built as BPE builds one: a small alphabet of
// single characters, then merges, each token the concatenation of two earlier ones ("a", "b", "ab", "abc"). The
// same text then has several tokenizations and a stop string can end inside a token or span several.
//
// Stable API (the GGUF export writes these strings as tokenizer.ggml.tokens): `vocabularyOf(spec).pieces[id]`
// is token id's text, "" for the control tokens (BOS and EOS: never text); `merges` lists each merged token's
// two halves in creation order (a BPE merges list); `PIECE_CHARACTERS` every character a piece may hold:
// printable ASCII letters, digits and punctuation that GPT-2's byte-level BPE maps to themselves and
// SentencePiece leaves alone (no space, no quote, no backslash), so an exported tokenizer shows the same text.
// Nothing here changes weights or digests: a model's text exists only for the requests that read it.
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import type { ModelSpec } from "./spec.ts";

/** Every character a token's text may hold (no space and nothing a byte-level or SentencePiece tokenizer maps). */
export const PIECE_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&*+-./:;=?@^_~";

/** The longest merged piece: long enough for tokens spanning several stop-string characters, short for overlaps. */
export const MAX_PIECE_LENGTH = 5;

/** What the text of a vocabulary depends on: nothing else of the spec (weights never see it). */
export type VocabularySpec = Pick<ModelSpec, "vocab" | "seed" | "bosId" | "eosId">;

export interface Vocabulary {
  /** Token id -> its text; "" for the control tokens (BOS and EOS), whose text is empty. Unique otherwise. */
  readonly pieces: readonly string[];
  /** The control tokens' ids (BOS and EOS): no text, never part of a stop string. */
  readonly controlIds: readonly number[];
  /** The alphabet: the single-character pieces every text over it can be written with. */
  readonly alphabet: string;
  /** Every merged piece's two halves (themselves pieces), in creation order: a BPE merges list. */
  readonly merges: readonly (readonly [string, string])[];
}

const memo = new Map<string, Vocabulary>();

/**
 * The alphabet's size: small, so that merged pieces share characters and a text has many tokenizations; it grows
 * with the vocabulary so that pieces of at most MAX_PIECE_LENGTH characters stay unique.
 */
function alphabetSize(normalTokens: number): number {
  let size = 4;
  while (size < PIECE_CHARACTERS.length && capacity(size) < 2 * normalTokens) size += 1;
  return Math.min(size, normalTokens);
}

function capacity(size: number): number {
  let total = 0;
  for (let length = 1; length <= MAX_PIECE_LENGTH; length++) total += size ** length;
  return total;
}

/** The vocabulary of a spec (memoized per vocab, seed, BOS and EOS). Pure. */
export function vocabularyOf(spec: VocabularySpec): Vocabulary {
  const key = `${spec.vocab}/${spec.seed}/${spec.bosId}/${spec.eosId}`;
  let vocabulary = memo.get(key);
  if (!vocabulary) {
    vocabulary = generateVocabulary(spec);
    memo.set(key, vocabulary);
  }
  return vocabulary;
}

function generateVocabulary(spec: VocabularySpec): Vocabulary {
  // Its own stream (the weights' streams start from the seed itself), so the text never moves a weight.
  const rng = xoroshiro128plus((Math.imul(spec.seed, 0x9e3779b1) ^ 0x7e57) | 0);
  const between = (lo: number, hi: number) => uniformInt(rng, lo, hi);
  const controlIds = [...new Set([spec.bosId, spec.eosId])].filter((id) => id >= 0 && id < spec.vocab);
  const normalIds = Array.from({ length: spec.vocab }, (_, id) => id).filter((id) => !controlIds.includes(id));
  // The alphabet: distinct characters drawn from PIECE_CHARACTERS.
  const characters = [...PIECE_CHARACTERS];
  const alphabet: string[] = [];
  for (let i = 0; i < alphabetSize(normalIds.length); i++)
    alphabet.push(characters.splice(between(0, characters.length - 1), 1)[0]);
  const created: string[] = [...alphabet];
  const pool = new MergePool(alphabet, between);
  const merges: [string, string][] = [];
  while (created.length < normalIds.length) {
    const merged = pool.next();
    created.push(merged[0] + merged[1]);
    merges.push(merged);
  }
  // Ids get pieces in a seeded order, so single characters and merges are spread over the vocabulary.
  // (A Fisher-Yates shuffle of the created pieces.)
  for (let i = created.length - 1; i > 0; i--) {
    const j = between(0, i);
    [created[i], created[j]] = [created[j], created[i]];
  }
  const pieces = new Array<string>(spec.vocab).fill("");
  normalIds.forEach((id, i) => (pieces[id] = created[i]));
  return { pieces, controlIds, alphabet: alphabet.join(""), merges };
}

/**
 * Draws merges: two earlier pieces whose concatenation is new and at most MAX_PIECE_LENGTH long. Pieces are kept
 * by length, so a draw picks a left piece that leaves room and a right piece that fits; after a few draws that
 * only find known pieces, the first piece an alphabet character extends into a new one (a cursor that only moves
 * forward: every extension behind it is known), so a vocabulary near the alphabet's capacity still builds in
 * linear time.
 */
class MergePool {
  /** byLength[n]: the pieces of n characters. */
  private readonly byLength: string[][] = Array.from({ length: MAX_PIECE_LENGTH + 1 }, () => []);
  private readonly all: string[] = [];
  private readonly seen = new Set<string>();
  private cursor = 0;

  constructor(
    private readonly alphabet: readonly string[],
    private readonly between: (lo: number, hi: number) => number,
  ) {
    for (const character of alphabet) this.add(character);
  }

  next(): [string, string] {
    const merged = this.draw() ?? this.extend();
    this.add(merged[0] + merged[1]);
    return merged;
  }

  private add(piece: string): void {
    this.byLength[piece.length].push(piece);
    this.all.push(piece);
    this.seen.add(piece);
  }

  /** A uniform piece of at most `maxLength` characters (one exists: the alphabet). */
  private pick(maxLength: number): string {
    let count = 0;
    for (let length = 1; length <= maxLength; length++) count += this.byLength[length].length;
    let index = this.between(0, count - 1);
    for (let length = 1; ; length++) {
      if (index < this.byLength[length].length) return this.byLength[length][index];
      index -= this.byLength[length].length;
    }
  }

  private draw(): [string, string] | undefined {
    for (let attempt = 0; attempt < 16; attempt++) {
      const left = this.pick(MAX_PIECE_LENGTH - 1);
      const right = this.pick(MAX_PIECE_LENGTH - left.length);
      if (!this.seen.has(left + right)) return [left, right];
    }
    return undefined;
  }

  private extend(): [string, string] {
    for (; this.cursor < this.all.length; this.cursor++) {
      const left = this.all[this.cursor];
      if (left.length >= MAX_PIECE_LENGTH) continue;
      for (const right of this.alphabet) if (!this.seen.has(left + right)) return [left, right];
    }
    throw new Error(`vocabulary: no new piece of at most ${MAX_PIECE_LENGTH} characters (${this.all.length} made)`);
  }
}

/** The text of a token sequence: its pieces concatenated (control tokens add nothing). Pure. */
export function detokenize(vocabulary: Vocabulary, tokens: readonly number[]): string {
  let text = "";
  for (const token of tokens) text += vocabulary.pieces[token] ?? "";
  return text;
}

/** Where each token's text ends in the detokenized sequence: ends[i] = the length of tokens[0..i]'s text. Pure. */
export function pieceEnds(vocabulary: Vocabulary, tokens: readonly number[]): number[] {
  let length = 0;
  return tokens.map((token) => (length += (vocabulary.pieces[token] ?? "").length));
}
