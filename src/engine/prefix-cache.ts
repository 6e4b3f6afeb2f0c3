// The prefix cache (engine.prefixCache), SGLang's radix cache with its EAGLE key: a tree of pages, each
// node one page of positions [jP, (j+1)P) holding, in every pool, the page whose KV a request computed for
// them. A node's key is not the page's P tokens but P + w of them: position i's KV in a draft pool is the
// draft row at anchor i, which pairs h_i with x_{i+1} (module k of multi-layer drafting: x_{i+k+1}), so it
// is only reusable by a request whose tokens agree up to x_{i+w} (w = 1 for chain and tree drafts, S for
// multi-layer, 0 with no draft KV). SGLang keys the radix tree on bigrams for EAGLE for exactly this reason;
// keyed on the page's own tokens, the last reused draft row would pair h_{m-1} with the creator's x_m.
//
// Matches are page-aligned (a partly matched page cannot be shared) and leave at least one token to
// compute. The cache holds a reference on every page of a node; a hit adds one per pool; a node whose pages
// only the cache holds is evictable (least recently used leaf first) when an allocation or an admission
// needs pages. The end of a run flushes it, so every pool ends empty.
import type { KvPool } from "./kv-pool.ts";

interface CacheNode {
  /** Positions [depth * P, (depth + 1) * P) keyed by tokens [depth * P, (depth + 1) * P + w). */
  key: readonly number[];
  depth: number;
  /** Pool name -> the page the node holds in it. */
  pages: Map<string, number>;
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
}

export class PrefixCache {
  private readonly root: CacheNode;
  private clock = 0;
  /** Evictions so far (the coverage label reads the trace's evict drops instead). */
  evictions = 0;

  constructor(
    private readonly pools: readonly KvPool[],
    private readonly pageSize: number,
    /** w: tokens past a position that its KV depends on. */
    readonly lookahead: number,
  ) {
    this.root = this.node([], -1, undefined);
  }

  private node(key: readonly number[], depth: number, parent: CacheNode | undefined): CacheNode {
    return { key, depth, pages: new Map(), children: new Map(), parent, lastUse: 0, created: this.clock++, hits: 0 };
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
      if (!child) break;
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
    return { length, matched: length + best, pages, partial };
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
        node.children.set(text, child);
      }
      child.lastUse = ++this.clock;
      node = child;
    }
  }

  /** Leaves whose pages only the cache holds, least recently used first. Pure. */
  private evictable(): CacheNode[] {
    const leaves: CacheNode[] = [];
    const visit = (node: CacheNode): void => {
      for (const child of node.children.values()) visit(child);
      if (node !== this.root && node.children.size === 0) {
        const cacheOnly = this.pools.every((pool) => pool.cacheOnly(node.pages.get(pool.name)!));
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
  evictOne(): boolean {
    const [victim] = this.evictable();
    if (!victim) return false;
    this.remove(victim, "evict");
    this.evictions += 1;
    return true;
  }

  /** Evicts until `enough()` or nothing is evictable. Mutates. */
  evictUntil(enough: () => boolean): void {
    while (!enough() && this.evictOne());
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
