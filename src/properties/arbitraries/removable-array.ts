// An array arbitrary whose shrinks may drop any one element, not only a prefix. fast-check's fc.array
// shrinks by keeping a suffix (and, recursively, the first element plus a shrunk rest), so a request at the
// end of a workload could never be removed alone: shrinking then stopped at three requests where the failure
// needs two (the third a bystander). Generation is fc.array's, value for value (same seeds, same cases);
// shrinking first tries each one-element removal, last element first, then fc.array's own shrinks. A space may
// generate at least n elements to reach its corner and still shrink below n (`shrinkTo`): a shrink is kept only
// while the case still fails, so a counterexample the corner needs 3 requests for stays at 3, and one that needs 1
// goes down to 1 (issue 34: stale-padding-slot stopped at the padding property's 3 requests and 20 tokens).
import fc from "fast-check";

class RemovableArray<T> extends fc.Arbitrary<T[]> {
  constructor(
    private readonly inner: fc.Arbitrary<T[]>,
    private readonly minLength: number,
    /** Each element after a removed one moves down one index: what keeps it the same element (see below). */
    private readonly movedDown: (item: T) => T,
  ) {
    super();
  }

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T[]> {
    return this.inner.generate(mrng, biasFactor);
  }

  canShrinkWithoutContext(value: unknown): value is T[] {
    return this.inner.canShrinkWithoutContext(value);
  }

  shrink(value: T[], context: unknown): fc.Stream<fc.Value<T[]>> {
    const removals =
      value.length > this.minLength && value.length > 1
        ? fc.Stream.of(
            ...value
              .map((_, index) => value.length - 1 - index)
              .map(
                (index) =>
                  new fc.Value([...value.slice(0, index), ...value.slice(index + 1).map(this.movedDown)], undefined),
              ),
          )
        : fc.Stream.nil<fc.Value<T[]>>();
    return removals.join(this.inner.shrink(value, context));
  }
}

/**
 * `movedDown`: an element whose meaning depends on its index (a request's prompt tokens are offset by it, so that
 * shrunk neighbours differ: workload.ts suffixOf) is rewritten to mean the same one index lower, so removing a
 * bystander leaves the others as they were (issue 34: length-before-stop stopped at 2 requests, the failing one's
 * prompt changing whenever the other was removed).
 */
export function removableArray<T>(
  item: fc.Arbitrary<T>,
  constraints: { minLength: number; maxLength: number; shrinkTo?: number },
  movedDown: (item: T) => T = (same) => same,
): fc.Arbitrary<T[]> {
  const { shrinkTo, ...lengths } = constraints;
  return new RemovableArray(
    fc.array(item, lengths),
    Math.min(shrinkTo ?? lengths.minLength, lengths.minLength),
    movedDown,
  );
}
