// Law "prefix-cache draft KV": the KV a prefix hit reuses equals what recomputation over the reusing
// request's own tokens gives, in the target pool and in every draft pool. A reused draft row at anchor i
// is the draft's K/V for h_i paired with x_{i+1} (module k: x_{i+k+1}): it depends on the token after the
// prefix, which is why the cache keys pages with that lookahead (docs/laws.md). Checked on the KV as it
// was at the hit (the reference engine's internals), within a float tolerance (the cached rows were
// computed in another batch). Catches draft KV left uninitialized (SGLang PRs 19897/19796) and reused rows
// paired with another request's next token. EAGLE-3 drafts' rows take auxiliary states, which the recomputation
// here does not build: for them only the target pool's reused KV is compared.
import { isEagle3 } from "../model/spec.ts";
import type { FloatArray } from "../runtime/ort.ts";
import { LawTally, notCheckable, type LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";
import type { Law } from "./definition.ts";
import type { PrefixHitRecord } from "../trace/run-result.ts";

export const PREFIX_CACHE_DRAFT_KV = "prefix-cache draft KV";

function firstDifference(got: FloatArray, expected: FloatArray, absolute: number, relative: number): number {
  for (let i = 0; i < expected.length; i++) {
    if (!(Math.abs(got[i] - expected[i]) <= absolute + relative * Math.abs(expected[i]))) return i;
  }
  return -1;
}

export async function checkPrefixCacheDraftKv(
  hits: readonly PrefixHitRecord[],
  oracle: ReferenceOracle,
  targetPool = "target",
  /** EAGLE-3 draft rows take auxiliary states, which kvRows does not recompute: their pools are not compared. */
  draftPools = true,
): Promise<LawResult> {
  if (hits.length === 0) return notCheckable(PREFIX_CACHE_DRAFT_KV, "no request hit a cached prefix");
  const tolerance = oracle.spec.dtype === "float32" ? 1e-4 : 1e-9;
  const tally = new LawTally(PREFIX_CACHE_DRAFT_KV);
  for (const hit of hits) {
    if (hit.length === 0) continue;
    const kind = hit.pool === targetPool ? "target" : "draft";
    if (kind === "draft" && !draftPools) continue;
    const expected = await oracle.kvRows(kind, hit.tokens, hit.length, hit.module);
    tally.checked += 1;
    for (const [name, got, want] of [
      ["keys", hit.keys, expected.keys],
      ["values", hit.values, expected.values],
    ] as const) {
      const at = firstDifference(got, want, tolerance, tolerance);
      if (at < 0) continue;
      // [layers, length, kvDim]
      const layer = Math.floor(at / (hit.length * hit.kvDim));
      const position = Math.floor((at % (hit.length * hit.kvDim)) / hit.kvDim);
      tally.fail({
        request: hit.request,
        message: `request ${hit.request}'s prefix hit reuses ${hit.pool} KV that recomputation over its own tokens does not give: position ${position}, layer ${layer}: ${name} ${got[at]}, recomputed ${want[at]}`,
        got: got[at],
        expected: want[at],
      });
      break;
    }
  }
  return tally.result();
}

export const law: Law = {
  name: PREFIX_CACHE_DRAFT_KV,
  summary: "the target and draft KV a prefix hit reuses equal a cache-free recomputation over the request's tokens",
  appliesTo: (testCase) => testCase.engine.prefixCache === true,
  needs: { internals: true, oracle: true },
  unavailable: ({ run }) => (run.internals?.prefixHits?.length ? undefined : "no request hit a cached prefix"),
  check: ({ testCase, run, oracle }) =>
    checkPrefixCacheDraftKv(run.internals?.prefixHits ?? [], oracle, "target", !isEagle3(testCase.draft?.kind)),
};
