// The prefix cache (engine.prefixCache), SGLang's radix cache with its EAGLE key: a tree of pages, each
// node one page of positions [jP, (j+1)P) holding, in every pool, the page whose KV a request computed for
// them. A node's key is not the page's P tokens but P + w of them: position i's KV in a draft pool is the
// draft row at anchor i, which pairs h_i with x_{i+1} (module k of multi-layer drafting: x_{i+k+1}), so it
// is only reusable by a request whose tokens agree up to x_{i+w} (w = 1 for chain and tree drafts, S for
// multi-layer, 0 with no draft KV). SGLang keys the radix tree on bigrams for EAGLE for exactly this reason;
// keyed on the page's own tokens, the last reused draft row would pair h_{m-1} with the creator's x_m.
//
// Hybrid models: a page's K/V holds no recurrent state, so a node also takes, from each pool with recurrent
// layers, the state after its last position (the creator's checkpoint, recurrent-states.ts), as SGLang's
// MambaRadixCache and vLLM's mamba prefix caching keep states at cached block ends; a match ends at the deepest
// node that holds one in every such pool.
//
// Matches are page-aligned (a partly matched page cannot be shared) and leave at least one token to
// compute. The cache holds a reference on every page of a node; a hit adds one per pool; a node whose pages
// only the cache holds is evictable (least recently used leaf first) when an allocation or an admission
// needs pages. The end of a run flushes it, so every pool ends empty.
import type { KvPool } from "./kv-pool.ts";
import type { RecurrentState } from "./recurrent-states.ts";

interface CacheNode {
  /** Positions [depth * P, (depth + 1) * P) keyed by tokens [depth * P, (depth + 1) * P + w). */
  key: readonly number[];
  depth: number;
  /** Pool name -> the page the node holds in it. */
  pages: Map<string, number>;
  /** Pool name -> the recurrent state after the node's last position (pools with recurrent layers). */
  states: Map<string, RecurrentState>;
  children: Map<string, CacheNode>;
  parent: CacheNode | undefined;
  lastUse: number;
  created: number;
  /** Times a prefix hit used this node. */
  hits: number;
}

export interface PrefixMatch {
  /** Page-aligned reusable positions [0, length). */
  length: number;
  /** Positions whose keys match before page alignment (>= length). */
  matched: number;
  /** Pool name -> pages covering [0, length). */
  pages: Map<string, number[]>;
  /** Pool name -> the partly matched next page (what the unaligned-length fault shares too). */
  partial: Map<string, number> | undefined;
  /** Pool name -> the recurrent state after [0, length) (pools with recurrent layers). */
  states: Map<string, RecurrentState>;
}

export class PrefixCache {
  private readonly root: CacheNode;
  private clock = 0;
  /** Evictions so far (the coverage label reads the trace's evict drops instead). */
  evictions = 0;

  private readonly recurrentPools: readonly KvPool[];

  constructor(
    private readonly pools: readonly KvPool[],
    private readonly pageSize: number,
    /** w: tokens past a position that its KV depends on. */
    readonly lookahead: number,
    /** Fault "prefix-cache-latest-recurrent-state": nodes take the creator's latest state, not their own end's. */
    private readonly latestStateFault = false,
  ) {
    this.root = this.node([], -1, undefined);
    this.recurrentPools = pools.filter((pool) => pool.recurrent !== undefined);
  }

  private node(key: readonly number[], depth: number, parent: CacheNode | undefined): CacheNode {
    const fields = { key, depth, pages: new Map(), states: new Map(), children: new Map(), parent };
    return { ...fields, lastUse: 0, created: this.clock++, hits: 0 };
  }

  private keyAt(tokens: readonly number[], depth: number): number[] | undefined {
    const end = (depth + 1) * this.pageSize + this.lookahead;
    return end <= tokens.length ? tokens.slice(depth * this.pageSize, end) : undefined;
  }

  /**
   * The longest cached prefix of `tokens` (at most `limit` positions), and the partial match into the next
   * page. Marks the matched nodes used. Mutates (use times).
   */
  match(tokens: readonly number[], limit: number): PrefixMatch {
    const P = this.pageSize;
    const pages = new Map(this.pools.map((pool) => [pool.name, [] as number[]]));
    let node = this.root;
    for (let depth = 0; (depth + 1) * P <= limit; depth++) {
      const key = this.keyAt(tokens, depth);
      const child = key && node.children.get(key.join(","));
      // Hybrid models: a node without the recurrent state after it cannot end a hit, nor can one under it.
      if (!child || this.recurrentPools.some((pool) => !child.states.has(pool.name))) break;
      node = child;
      node.lastUse = ++this.clock;
      node.hits += 1;
      for (const pool of this.pools) pages.get(pool.name)!.push(child.pages.get(pool.name)!);
    }
    const length = node === this.root ? 0 : (node.depth + 1) * P;
    // The partial match: positions of the next page whose lookahead keys agree with a child's.
    let best = 0;
    let partial: Map<string, number> | undefined;
    for (const child of node.children.values()) {
      let matched = 0;
      while (matched < P && length + matched < limit) {
        const at = length + matched;
        if (at + this.lookahead >= tokens.length) break;
        let same = true;
        for (let k = 0; k <= this.lookahead && same; k++) same = tokens[at + k] === child.key[matched + k];
        if (!same) break;
        matched += 1;
      }
      if (matched > best) {
        best = matched;
        partial = child.pages;
      }
    }
    return { length, matched: length + best, pages, partial, states: node.states };
  }

  /**
   * Caches the request's prefix: pages of positions [0, limit) (whole pages whose key tokens are known)
   * that no node holds yet, under the path the request matches. A node that exists with other pages ends
   * the walk (its subtree belongs to the other copy). Mutates the pools (the cache's references).
   */
  insert(request: number, tokens: readonly number[], limit: number): void {
    const P = this.pageSize;
    let node = this.root;
    for (let depth = 0; (depth + 1) * P <= limit; depth++) {
      const key = this.keyAt(tokens, depth);
      if (!key) return;
      const own = this.pools.map((pool) => pool.persistedPage(request, depth));
      if (own.some((page) => page === undefined)) return;
      const text = key.join(",");
      let child = node.children.get(text);
      if (child) {
        if (this.pools.some((pool, i) => child!.pages.get(pool.name) !== own[i])) return;
      } else {
        child = this.node(key, depth, node);
        this.pools.forEach((pool, i) => {
          child!.pages.set(pool.name, own[i]!);
          pool.cacheAcquire(own[i]!);
        });
        for (const pool of this.recurrentPools) {
          // The fault: the state the creator holds now (after its whole sequence) stands for every node it
          // creates, as an engine that snapshots the request's state when it caches its pages.
          const state = this.latestStateFault
            ? pool.recurrent!.committedOf(request)
            : pool.recurrent!.checkpointOf(request, (depth + 1) * P);
          if (state) child.states.set(pool.name, state);
        }
        node.children.set(text, child);
      }
      child.lastUse = ++this.clock;
      node = child;
    }
  }

  /**
   * Leaves whose pages only the cache holds (in `pressured`, the pool that needs pages; else in every pool),
   * least recently used first. A leaf whose page another pool's request still holds may go: the cache drops
   * its references and the holder keeps that page (pools agree on who holds a node's pages unless a fault broke
   * them apart). Pure.
   */
  private evictable(pressured?: KvPool): CacheNode[] {
    const leaves: CacheNode[] = [];
    const visit = (node: CacheNode): void => {
      for (const child of node.children.values()) visit(child);
      if (node !== this.root && node.children.size === 0) {
        const pools = pressured ? [pressured] : this.pools;
        const cacheOnly = pools.every((pool) => pool.cacheOnly(node.pages.get(pool.name)!));
        if (cacheOnly) leaves.push(node);
      }
    };
    visit(this.root);
    return leaves.sort((a, b) => a.lastUse - b.lastUse || a.created - b.created);
  }

  private remove(node: CacheNode, reason: "evict" | "flush"): void {
    for (const pool of this.pools) pool.cacheDrop(node.pages.get(pool.name)!, reason);
    node.parent?.children.delete(node.key.join(","));
  }

  /** Evicts the least recently used evictable leaf; false when none is. Mutates. */
  evictOne(pressured?: KvPool): boolean {
    const [victim] = this.evictable(pressured);
    if (!victim) return false;
    this.remove(victim, "evict");
    this.evictions += 1;
    return true;
  }

  /** Evicts until `enough()` or nothing is evictable (for `pressured`'s sake). Mutates. */
  evictUntil(enough: () => boolean, pressured?: KvPool): void {
    while (!enough() && this.evictOne(pressured));
  }

  /** Drops every node (the end of a run): the pools end empty. Mutates. */
  flush(): void {
    const visit = (node: CacheNode): void => {
      for (const child of [...node.children.values()]) visit(child);
      if (node !== this.root) this.remove(node, "flush");
    };
    visit(this.root);
  }
}
