// Engine configs: S, K (N follows), chunk size, page size, token budget. Ranges come from the space.
import fc from "fast-check";
import { defaultEngineConfig, maxTreeTokens, type EngineConfig } from "../../case/engine-config.ts";
import type { CaseSpace } from "./space.ts";

/** A budget no prompt of the space reaches: prefill is limited by the chunk size alone. */
export const UNLIMITED_BUDGET = 256;

export interface EngineChoice {
  numSteps: number;
  topk: number;
  /** Raw draw for N when topk > 1 (mapped into the valid range). */
  treeTokens: number;
  chunkSize: number | null;
  pageSize: number;
  tokenBudget: number;
  /** Applied only where multi-layer drafting can run (topk 1, not the EAGLE head). */
  multiLayer: boolean;
  graphReplay: boolean;
  /** Graph replay on padded row buckets (turns graph replay on). */
  padded: boolean;
  overlap: boolean;
  prefixCache: boolean;
  /** The pool at the workload's minimum (caseOf sizes it: it needs the requests). */
  tightPool: boolean;
}

/**
 * Row buckets of padded graph replay (SGLang captures 1, 2, 4, 8, then steps of 8 or 16). Decode-side forwards
 * of the space run 1..24 rows, so most land on a bucket with padding and the largest run eagerly.
 */
export const PADDED_BUCKETS: readonly number[] = [1, 2, 4, 8, 16];

export function engineChoiceArbitrary(s: CaseSpace): fc.Arbitrary<EngineChoice> {
  const chunkSizes = fc.integer({ min: s.chunk.min, max: s.chunk.max });
  const budgets = fc.integer({ min: s.budget.min, max: s.budget.max });
  return fc.record({
    numSteps: fc.integer(s.steps),
    // An index, not constantFrom: constantFrom shrinks only to the first value, an index shrinks through
    // every smaller one (a failure needing topk > 1 shrinks to 2, not stays at 4).
    topk: fc.integer({ min: 0, max: s.topks.length - 1 }).map(
      (index) => s.topks[index],
      (value) => s.topks.indexOf(value as number),
    ),
    treeTokens: s.topks.some((k) => k > 1) ? fc.nat({ max: 63 }) : fc.constant(0),
    // oneof keeps null first: an unchunked case is the simpler one when the space allows it.
    chunkSize: s.chunk.noneOnly
      ? fc.constant(null)
      : s.chunk.none
        ? fc.oneof({ withCrossShrink: true }, fc.constant(null), chunkSizes)
        : chunkSizes,
    pageSize: fc.integer(s.pages),
    tokenBudget: s.budget.unlimitedOnly
      ? fc.constant(UNLIMITED_BUDGET)
      : s.budget.unlimited
        ? fc.oneof({ withCrossShrink: true }, fc.constant(UNLIMITED_BUDGET), budgets)
        : budgets,
    multiLayer: fc.constantFrom(...s.multiLayer),
    graphReplay: fc.constantFrom(...s.graphReplay),
    padded: fc.constantFrom(...s.padded),
    overlap: fc.constantFrom(...s.overlap),
    prefixCache: fc.constantFrom(...s.prefixCache),
    tightPool: fc.constantFrom(...s.tightPool),
  });
}

/** N: S + 1 for a chain; for a tree, within [2, min(8, 1 + K + (S - 1)K^2)]. */
export function numDraftTokensFor(numSteps: number, topk: number, raw: number): number {
  if (topk === 1) return numSteps + 1;
  const max = Math.min(8, maxTreeTokens(numSteps, topk));
  return 2 + (raw % (max - 1));
}

/** Multi-layer drafting runs with topk 1 and a mirror-family draft (modules); elsewhere the draw is ignored. */
export function multiLayerApplies(choice: EngineChoice, draftKind: string | undefined): boolean {
  return (
    choice.multiLayer &&
    choice.topk === 1 &&
    draftKind !== undefined &&
    !["eagle", "eagle3", "eagle3-mirror", "ngram"].includes(draftKind)
  );
}

export function engineConfigOf(
  choice: EngineChoice,
  faults: readonly EngineConfig["faults"][number][],
  draftKind?: string,
): EngineConfig {
  // Prompt lookup proposes chains: the topk draw is ignored.
  const topk = draftKind === "ngram" ? 1 : choice.topk;
  return defaultEngineConfig({
    mode: "speculative",
    numSteps: choice.numSteps,
    topk,
    numDraftTokens: numDraftTokensFor(choice.numSteps, topk, choice.treeTokens),
    chunkSize: choice.chunkSize,
    pageSize: choice.pageSize,
    tokenBudget: choice.tokenBudget,
    // 256 pages cover the largest workload of the space (3 requests x (prompt + max new + N) plus scratch); the
    // per-step integrity scan is linear in the pool size.
    poolSlots: 256 * choice.pageSize,
    faults: [...faults],
    ...(multiLayerApplies(choice, draftKind) ? { multiLayer: true } : {}),
    ...(choice.graphReplay || choice.padded ? { graphReplay: true } : {}),
    ...(choice.padded ? { graphBuckets: [...PADDED_BUCKETS] } : {}),
    ...(choice.overlap ? { overlap: true } : {}),
    ...(choice.prefixCache ? { prefixCache: true } : {}),
  });
}
