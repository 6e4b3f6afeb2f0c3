// Models: a preset name (cached sessions: a preset costs tens of ms to build once per process) and a
// draft kind. Draft seeds stay fixed so every draft graph is built once.
import fc from "fast-check";
import { getPreset } from "../../model/presets.ts";
import { defaultDraftSpec, type DraftKind, type DraftSpec, type ModelSpec } from "../../model/spec.ts";

export function presetArbitrary(presets: readonly string[]): fc.Arbitrary<string> {
  for (const name of presets) getPreset(name); // an unknown preset fails here, not inside a run
  return fc.constantFrom(...presets);
}

/**
 * A draft kind, each with its weight (default 1); EAGLE-3 drafts also draw norm_before_fc (a checkpoint config
 * option their laws read). Shrinks to the first kind, whatever the weights (fc.oneof with cross-shrinking moves a
 * value to its first arbitrary), and to norm_before_fc off.
 */
export function draftArbitrary(
  drafts: readonly DraftKind[],
  weights: Partial<Record<DraftKind, number>> = {},
  /** Every eagle3 head is the oracle (arbitraries/eagle3-oracle.ts): no draw of its own, so draws stay aligned. */
  oracle = false,
): fc.Arbitrary<DraftSpec> {
  const kinds = drafts.every((kind) => (weights[kind] ?? 1) === 1)
    ? fc.constantFrom(...drafts)
    : fc.oneof(
        { withCrossShrink: true },
        ...drafts.map((kind) => ({ arbitrary: fc.constant(kind), weight: weights[kind] ?? 1 })),
      );
  return fc.tuple(kinds, fc.boolean()).map(
    ([kind, normBeforeFc]) => {
      const spec = defaultDraftSpec(kind, 1, { normBeforeFc });
      return oracle && kind === "eagle3" ? { ...spec, oracle: true } : spec;
    },
    (value) => [(value as DraftSpec).kind, (value as DraftSpec).normBeforeFc === true],
  );
}

/**
 * Prompt tokens are drawn as raw naturals and mapped into [3, vocab): ids 0..2 are pad, BOS and EOS.
 * Shrinking a raw value to 0 gives token 3 on every preset, so shrunk prompts read the same everywhere.
 */
export function promptToken(spec: ModelSpec, raw: number): number {
  const first = Math.max(spec.bosId, spec.eosId) + 1;
  return first + (raw % (spec.vocab - first));
}
