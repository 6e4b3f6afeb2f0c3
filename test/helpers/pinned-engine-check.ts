// A real engine under every law's property through the protocol, its findings pinned: >= 100 generated cases
// within its declared capabilities, no law failing but the pinned ones, and each pinned law still failing on
// this version (else the finding is stale and the test turns red). The llama.cpp engines' CI tests use it.
import { expect } from "vitest";
import { narrowSpace } from "../../src/properties/arbitraries/capabilities.ts";
import { LAW_PROPERTIES } from "../../src/properties/law-properties.ts";
import { runSuite, type SuiteResult } from "../../src/properties/suite.ts";
import { ExternalSource } from "../../src/sources/external.ts";

export async function checkPinnedEngine(
  command: string,
  pins: ReadonlyMap<string, string>,
  options: { runs: number; timeoutMs: number },
): Promise<SuiteResult> {
  const source = await ExternalSource.start(command, { timeoutMs: options.timeoutMs });
  try {
    const suite = await runSuite({
      properties: LAW_PROPERTIES,
      runs: options.runs,
      seed: 1,
      source,
      engine: { command, name: source.name },
      narrow: (space) => narrowSpace(space, source.capabilities),
      pinned: new Set(pins.keys()),
      failureDir: false,
    });
    const runs = suite.runs.reduce((sum, run) => sum + run.runs, 0);
    expect(runs).toBeGreaterThanOrEqual(100);
    expect(suite.runs.filter((run) => run.failure).map((run) => run.failure!.laws)).toEqual([]);
    for (const law of pins.keys())
      expect(suite.stats.get(law)?.failed ?? 0, `${law} no longer fails`).toBeGreaterThan(0);
    return suite;
  } finally {
    await source.close();
  }
}
