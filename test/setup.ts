/**
 * Vitest setup (every test file): pins fast-check's global seed from SPECCONF_SEED, so a failing
 * property run can be replayed with `SPECCONF_SEED=<seed> npx vitest run ...`.
 * @fast-check/vitest's test.prop uses params.seed, else this global seed, else a random one.
 */
import fc from "fast-check";

export function seedFromEnv(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const text = raw.trim();
  const seed = Number(text);
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(seed)) {
    throw new Error(`SPECCONF_SEED must be an integer, got '${raw}'`);
  }
  return seed;
}

const seed = seedFromEnv(process.env.SPECCONF_SEED);
if (seed !== undefined) {
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
