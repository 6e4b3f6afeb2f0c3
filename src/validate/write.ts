// JSON Lines text for outputs files (written atomically with src/schema/atomic-write.ts).

/** JSON Lines text: one compact JSON value per line. */
export function jsonLines(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join("\n") + (values.length ? "\n" : "");
}
