// A prefix hit at the start of a (re)prefill: the request's first positions take the cached pages of every
// pool (target and draft), their KV is not recomputed, and its prefill starts at the hit length. The hit is
// declared in the trace (a lifecycle "prefix-hit" with the length each pool reuses; the slots in the
// references), and the reused KV is kept aside so the prefix-cache draft KV law can compare it with a
// cache-free recomputation over this request's own tokens. Two faults live here: the shared draft pages hold
// never-written KV ("prefix-hit-uninitialized-draft-kv", SGLang PRs 19897/19796), or the draft pools share the
// partly matched last page at the unaligned length ("prefix-draft-kv-unaligned", SGLang PR 10846). Hybrid
// models also take the recurrent state the hit's last node holds (prefix-cache.ts).
import type { FloatArray } from "../../runtime/ort.ts";
import type { EngineContext } from "../context.ts";
import type { KvPool } from "../kv-pool.ts";
import type { Request } from "../request.ts";
import type { PrefixHitRecord } from "../../trace/run-result.ts";

function snapshot(pool: KvPool, request: number, length: number): { keys: FloatArray; values: FloatArray } {
  const Float = pool.keys.constructor as { new (length: number): FloatArray };
  const keys = new Float(pool.layers * length * pool.kvDim);
  const values = new Float(pool.layers * length * pool.kvDim);
  for (let position = 0; position < length; position++) {
    const slot = pool.slotOf(request, position)!;
    for (let layer = 0; layer < pool.layers; layer++) {
      const from = (layer * pool.numSlots + slot) * pool.kvDim;
      const to = (layer * length + position) * pool.kvDim;
      keys.set(pool.keys.subarray(from, from + pool.kvDim), to);
      values.set(pool.values.subarray(from, from + pool.kvDim), to);
    }
  }
  return { keys, values };
}

/** Mutates: looks the request up in the prefix cache and, on a hit, starts its prefill past the prefix. */
export function applyPrefixHit(context: EngineContext, request: Request): void {
  const cache = context.prefixCache;
  if (!cache || request.prefilledLength !== 0 || request.targetKvLength !== 0 || request.skipDraftOnResume) return;
  // At least one token is computed (its logits or the draft extend's last row are needed).
  const match = cache.match(request.tokens, request.prefillLength - 1);
  if (match.length === 0) return;
  const pools = [context.pools.target, ...context.draftPools()];
  const lengths: { pool: string; length: number }[] = [];
  for (const pool of pools) {
    const draft = pool !== context.pools.target;
    let length = match.length;
    if (draft && context.faults.has("prefix-hit-uninitialized-draft-kv")) {
      // The cached pages are shared as they should be, but their draft KV was never written (SGLang: the
      // radix cache entry was made without the draft's KV): the slots hold what a fresh buffer holds.
      pool.sharePersisted(request.id, match.pages.get(pool.name)!, length);
      pool.forgetContentsUnchecked(Array.from({ length }, (_, position) => pool.slotOf(request.id, position)!));
    } else if (draft && context.faults.has("prefix-draft-kv-unaligned") && match.partial && match.matched > length) {
      length = match.matched;
      pool.sharePersisted(request.id, [...match.pages.get(pool.name)!, match.partial.get(pool.name)!], length);
    } else {
      pool.sharePersisted(request.id, match.pages.get(pool.name)!, length);
    }
    // Hybrid models: the recurrent state after the prefix, from the node the hit ends at (prefix-cache.ts).
    const state = match.states.get(pool.name);
    if (pool.recurrent && state) pool.recurrent.restore(request.id, state);
    lengths.push({ pool: pool.name, length });
    const module = context.pools.draftModules?.indexOf(pool);
    context.prefixHits.push({
      request: request.id,
      pool: pool.name,
      ...(module !== undefined && module >= 0 ? { module } : {}),
      length,
      layers: pool.layers,
      kvDim: pool.kvDim,
      tokens: [...request.tokens],
      ...snapshot(pool, request.id, length),
    });
  }
  request.prefilledLength = match.length;
  request.targetKvLength = match.length;
  const draftLength = (name: string) => lengths.find((entry) => entry.pool === name)!.length;
  if (context.pools.draft) request.draftKvLength = draftLength(context.pools.draft.name);
  context.pools.draftModules?.forEach((pool, module) => (request.moduleKvLength[module] = draftLength(pool.name)));
  context.recorder.note({
    kind: "prefix-hit",
    request: request.id,
    step: context.step,
    matched: match.matched,
    pools: lengths,
  });
}

/** Mutates: caches the request's prefix once its prefill has persisted it in every pool. */
export function cachePrefix(context: EngineContext, request: Request): void {
  const cache = context.prefixCache;
  if (!cache) return;
  const pools = [context.pools.target, ...context.draftPools()];
  const limit = Math.min(...pools.map((pool) => pool.persistedLength(request.id)));
  cache.insert(request.id, request.tokens, limit);
}
