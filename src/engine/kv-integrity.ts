// KvPool.checkIntegrity's independent recomputation: derives who should own every page and slot from the
// free list, the request tables and the prefix cache's pages alone, then compares that with the reverse maps
// (page owners, slot owners) and the reference counts. It shares no bookkeeping with the mutation paths, so a
// bug there shows up here. A page is claimed once (the free list, a temporary table) or by as many persisted
// holders (request tables and prefix-cache nodes) as its reference count; holders of a shared page hold its
// slots at the same positions.
//
// It runs after every step of every run on every pool (KV conservation), so it is written for speed: the
// expected owners live in typed scratch arrays reused between calls (one pass over the pool, no object per
// slot); only a violation builds an object. What it checks and reports does not depend on that.
import type { KvPoolInternals, PageOwner, SlotOwner } from "./kv-pool.ts";
import type { IntegrityViolation } from "../trace/run-result.ts";

/** Scratch arrays sized for the largest pool checked so far (contents are rewritten by every check). */
const scratch = {
  pageClaims: new Uint32Array(0),
  /** Claims by the prefix cache, and whether a temporary table claims the page. */
  pageCacheClaims: new Uint32Array(0),
  pageTemporaryClaims: new Uint32Array(0),
  /** The first claim of each page: the free list, the cache, or a request's table (which one, persisted or temporary). */
  pageClaimFree: new Uint8Array(0),
  pageClaimRequest: new Float64Array(0),
  pageClaimTemporary: new Uint8Array(0),
  /** Expected owner of each slot: 0 none, 1 persisted, 2 temporary. */
  slotKind: new Uint8Array(0),
  slotRequest: new Float64Array(0),
  slotPosition: new Float64Array(0),
};

function scratchFor(numPages: number, numSlots: number): typeof scratch {
  if (scratch.pageClaims.length < numPages) {
    scratch.pageClaims = new Uint32Array(numPages);
    scratch.pageCacheClaims = new Uint32Array(numPages);
    scratch.pageTemporaryClaims = new Uint32Array(numPages);
    scratch.pageClaimFree = new Uint8Array(numPages);
    scratch.pageClaimRequest = new Float64Array(numPages);
    scratch.pageClaimTemporary = new Uint8Array(numPages);
  }
  if (scratch.slotKind.length < numSlots) {
    scratch.slotKind = new Uint8Array(numSlots);
    scratch.slotRequest = new Float64Array(numSlots);
    scratch.slotPosition = new Float64Array(numSlots);
  }
  scratch.pageClaims.fill(0, 0, numPages);
  scratch.pageCacheClaims.fill(0, 0, numPages);
  scratch.pageTemporaryClaims.fill(0, 0, numPages);
  scratch.slotKind.fill(0, 0, numSlots);
  return scratch;
}

/** pageClaimFree: a page's first claim is a table's, the free list's, or the prefix cache's. */
const FIRST_TABLE = 0;
const FIRST_FREE = 1;
const FIRST_CACHE = 2;

const NONE = 0;
const PERSISTED = 1;
const TEMPORARY = 2;

function describeOwner(owner: SlotOwner): string {
  return owner.temporary ? `request ${owner.request} temporary` : `request ${owner.request} position ${owner.position}`;
}

/** One check: the expected owners built from the free list and the tables, then compared. */
class Recomputation {
  readonly violations: IntegrityViolation[] = [];
  readonly numSlots: number;
  readonly arrays: typeof scratch;

  constructor(
    readonly pool: string,
    readonly pageSize: number,
    readonly numPages: number,
    readonly pageRefs: readonly number[],
  ) {
    this.numSlots = numPages * pageSize;
    this.arrays = scratchFor(numPages, this.numSlots);
  }

  report(message: string, where: { slot?: number; request?: number } = {}): void {
    this.violations.push({ pool: this.pool, ...where, message });
  }

  inPageRange(page: number): boolean {
    return Number.isInteger(page) && page >= 0 && page < this.numPages;
  }

  /**
   * A page several persisted holders (tables, cache nodes) claim as often as its reference count: shared, not
   * claimed twice.
   */
  shared(page: number): boolean {
    const { pageClaims, pageClaimFree, pageTemporaryClaims } = this.arrays;
    return (
      pageClaims[page] > 1 &&
      pageClaims[page] === this.pageRefs[page] &&
      pageClaimFree[page] !== FIRST_FREE &&
      pageTemporaryClaims[page] === 0
    );
  }

  /** Only prefix-cache nodes claim the page (its writer's request may be gone). */
  cacheOnly(page: number): boolean {
    const claims = this.arrays.pageClaims[page];
    return claims > 0 && this.arrays.pageCacheClaims[page] === claims;
  }

  claimPage(page: number, request: number | "free", temporary: boolean): void {
    const { pageClaims, pageClaimFree, pageClaimRequest, pageClaimTemporary, pageTemporaryClaims } = this.arrays;
    if (temporary) pageTemporaryClaims[page] += 1;
    if (pageClaims[page]++ > 0) return;
    pageClaimFree[page] = request === "free" ? FIRST_FREE : FIRST_TABLE;
    pageClaimRequest[page] = request === "free" ? -1 : request;
    pageClaimTemporary[page] = temporary ? 1 : 0;
  }

  expectedOwner(slot: number): SlotOwner | undefined {
    const { slotKind, slotRequest, slotPosition } = this.arrays;
    return slotKind[slot] === NONE
      ? undefined
      : { request: slotRequest[slot], position: slotPosition[slot], temporary: slotKind[slot] === TEMPORARY };
  }

  claimSlot(slot: number, request: number, position: number, temporary: boolean): void {
    const { slotKind, slotRequest, slotPosition } = this.arrays;
    const sharedSlot =
      !temporary &&
      slotKind[slot] === PERSISTED &&
      slotPosition[slot] === position &&
      this.shared(Math.floor(slot / this.pageSize));
    if (sharedSlot) return;
    if (slotKind[slot] !== NONE) {
      this.report(
        `slot owned twice: ${describeOwner(this.expectedOwner(slot)!)} and ${describeOwner({ request, position, temporary })}`,
        { slot, request },
      );
      return;
    }
    slotKind[slot] = temporary ? TEMPORARY : PERSISTED;
    slotRequest[slot] = request;
    slotPosition[slot] = position;
  }
}

export function findIntegrityViolations(
  pool: string,
  pageSize: number,
  numPages: number,
  state: KvPoolInternals,
): IntegrityViolation[] {
  const check = new Recomputation(pool, pageSize, numPages, state.pageRefs);
  const { numSlots } = check;
  const { pageClaims, pageClaimFree, pageClaimRequest, pageClaimTemporary, pageCacheClaims, slotKind } = check.arrays;
  // Pages: claimed once by the free list or a temporary table, or by as many persisted holders as references.
  const { freePages } = state;
  for (let i = 0; i < freePages.length; i++) {
    const page = freePages[i];
    if (!check.inPageRange(page)) {
      check.report(`free list holds out-of-range page ${page}`);
      continue;
    }
    if (i > 0 && freePages[i - 1] <= page) check.report(`free list not strictly descending at index ${i}`);
    // The free list comes first, so a free page's first claim is the free list's.
    if (pageClaims[page]++ === 0) pageClaimFree[page] = FIRST_FREE;
  }
  for (const [page, held] of state.cachePages) {
    if (!check.inPageRange(page)) {
      check.report(`the prefix cache holds out-of-range page ${page}`);
      continue;
    }
    if (pageClaims[page] === 0) pageClaimFree[page] = FIRST_CACHE;
    pageClaims[page] += held;
    pageCacheClaims[page] += held;
  }
  for (const [request, table] of state.tables) {
    for (const page of table.persistedPages) {
      if (check.inPageRange(page)) check.claimPage(page, request, false);
      else check.report(`table holds out-of-range page ${page}`, { request });
    }
    for (const page of table.temporaryPages) {
      if (check.inPageRange(page)) check.claimPage(page, request, true);
      else check.report(`table holds out-of-range page ${page}`, { request });
    }
  }

  // Slots, once every page's holders are known (a shared page's slots are held at the same positions).
  for (const [request, table] of state.tables) {
    const { persistedPages, persistedLength, temporaryPages, temporarySlots } = table;
    if (persistedPages.length === 0 && temporaryPages.length === 0) {
      check.report("request owns nothing but is still listed", { request });
    }
    if (!Number.isSafeInteger(persistedLength) || persistedLength < 0) {
      check.report(`invalid persisted length ${persistedLength}`, { request });
    }
    if (persistedPages.length !== Math.ceil(persistedLength / pageSize)) {
      check.report(`${persistedPages.length} persisted pages for length ${persistedLength} (page size ${pageSize})`, {
        request,
      });
    }
    // Bounded by the pages held, so a corrupted huge length cannot make the check hang.
    const covered = Math.min(persistedLength, persistedPages.length * pageSize);
    if (persistedLength > covered) {
      check.report(`persisted positions ${covered}..${persistedLength - 1} have no page`, { request });
    }
    for (let position = 0; position < covered; position++) {
      const page = persistedPages[Math.floor(position / pageSize)];
      if (!check.inPageRange(page)) {
        check.report(`persisted position ${position} has no slot`, { request });
        continue;
      }
      check.claimSlot(page * pageSize + (position % pageSize), request, position, false);
    }
    const temporaryPageSet = new Set(temporaryPages);
    const slotsPerTemporaryPage = new Map<number, number>();
    for (const slot of temporarySlots) {
      const page = Math.floor(slot / pageSize);
      if (!Number.isInteger(slot) || !temporaryPageSet.has(page)) {
        check.report(`temporary slot outside the request's temporary pages`, { slot, request });
        continue;
      }
      slotsPerTemporaryPage.set(page, (slotsPerTemporaryPage.get(page) ?? 0) + 1);
      check.claimSlot(slot, request, state.slotOwners[slot]?.position ?? -1, true);
    }
    for (const page of temporaryPageSet) {
      if (!slotsPerTemporaryPage.has(page)) {
        check.report(`temporary page ${page} has no slots but was not freed`, { request });
      }
    }
  }

  for (let page = 0; page < numPages; page++) {
    const slot = page * pageSize;
    const claims = pageClaims[page];
    if (claims === 0) {
      check.report(`page ${page} leaked: neither free nor owned`, { slot });
      continue;
    }
    if (claims > 1 && !check.shared(page)) {
      check.report(`page ${page} claimed ${claims} times (${state.pageRefs[page]} references)`, { slot });
      continue;
    }
    const first = pageClaimFree[page];
    const references = first === FIRST_FREE ? 0 : claims;
    if (state.pageRefs[page] !== references)
      check.report(`page ${page} counts ${state.pageRefs[page]} references for ${references} holders`, { slot });
    const recorded = state.pageOwners[page];
    // A shared or cached page keeps its writer as owner (persisted); a page of one table is that table's.
    const agrees =
      first === FIRST_FREE
        ? recorded === undefined
        : first === FIRST_CACHE || claims > 1
          ? recorded !== undefined && !recorded.temporary
          : recorded !== undefined &&
            recorded.request === pageClaimRequest[page] &&
            recorded.temporary === (pageClaimTemporary[page] === 1);
    if (!agrees) {
      const claim: PageOwner | "free" | "cache" =
        first === FIRST_FREE
          ? "free"
          : first === FIRST_CACHE
            ? "cache"
            : { request: pageClaimRequest[page], temporary: pageClaimTemporary[page] === 1 };
      check.report(
        `page ${page} reverse map ${JSON.stringify(recorded ?? "free")} disagrees with ${JSON.stringify(claim)}`,
        { slot },
      );
    }
  }

  const { slotOwners } = state;
  const { slotRequest, slotPosition } = check.arrays;
  for (let slot = 0; slot < numSlots; slot++) {
    const actual = slotOwners[slot];
    const kind = slotKind[slot];
    const page = Math.floor(slot / pageSize);
    // A page only the cache holds keeps its writer's persisted owners (their request may be gone).
    if (kind === NONE && check.cacheOnly(page)) {
      if (actual?.temporary) check.report(`slot in a cached page is temporary`, { slot });
      continue;
    }
    let agrees: boolean;
    if (kind === NONE) agrees = actual === undefined;
    else {
      const positionAgrees =
        kind === TEMPORARY
          ? Number.isInteger(actual?.position) && actual!.position >= -1
          : actual?.position === slotPosition[slot];
      agrees =
        actual !== undefined &&
        (check.shared(page) || actual.request === slotRequest[slot]) &&
        actual.temporary === (kind === TEMPORARY) &&
        positionAgrees;
    }
    if (!agrees) {
      const expected = check.expectedOwner(slot);
      const describe = (owner: SlotOwner | undefined): string => (owner ? describeOwner(owner) : "free");
      const request = (expected ?? actual)?.request;
      check.report(`slot reverse map says ${describe(actual)}, tables say ${describe(expected)}`, { slot, request });
    }
  }
  if (slotOwners.length !== numSlots) check.report(`slot reverse map has ${slotOwners.length} entries`);
  return check.violations;
}
