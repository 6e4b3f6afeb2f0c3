// `validate` on outputs and traces dumped from the reference engine with a fault on reports exactly the
// broken laws: the trace laws that fail are those the engine's own check (checkRun) finds (KV conservation
// too: the trace records every slot the pools released), and the output checks fail where the fault changes
// what another engine would report. With no fault, everything holds.
import { describe, expect, it } from "vitest";
import type { FaultName } from "../../src/case/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import type { RunResult } from "../../src/trace/run-result.ts";
import { targetOnlyCase as targetOnlyTwin } from "../../src/check/source.ts";
import { caseWithFaults } from "../../src/adapter/reference-outputs.ts";
import { checkRun } from "../helpers/check-run.ts";
import { KV_CONSERVATION } from "../../src/laws/kv-conservation.ts";
import { failing, goldenCase, reference, validateRun } from "../helpers/golden-runs.ts";

const baselines = new Map<string, Promise<RunResult>>();
function targetOnly(suite: string, name: string): Promise<RunResult> {
  const key = `${suite}/${name}`;
  if (!baselines.has(key)) baselines.set(key, runCase(targetOnlyTwin(goldenCase(suite, name).case)));
  return baselines.get(key)!;
}

interface Scenario {
  suite: string;
  name: string;
  fault?: FaultName;
  /** Output checks that fail (the trace laws are compared with checkRun's). */
  outputs: string[];
}

const SCENARIOS: Scenario[] = [
  { suite: "tiny-mirror", name: "chunked-paged", outputs: [] },
  { suite: "tiny-eagle", name: "chunked", outputs: [] },
  {
    suite: "tiny-mirror",
    name: "chunked-paged",
    fault: "chunked-tail-token",
    outputs: ["accept lengths", "first-round drafts"],
  },
  {
    suite: "tiny-mirror",
    name: "chunked-paged",
    fault: "draft-position-early-increment",
    outputs: ["accept lengths", "first-round drafts"],
  },
  { suite: "tiny-eagle", name: "chunked", fault: "phase-confusion", outputs: ["accept lengths"] },
  { suite: "tiny-mirror", name: "unchunked", fault: "cross-request-mask-leak", outputs: ["golden tokens"] },
  { suite: "tiny-mirror", name: "tree", fault: "bonus-stride", outputs: ["golden tokens"] },
  { suite: "tiny-eagle", name: "chunked", fault: "leaked-rejected-slots", outputs: [] },
  { suite: "tiny-mirror", name: "sampling", outputs: [] },
  { suite: "tiny-mirror", name: "sampling", fault: "length-before-stop", outputs: ["golden tokens"] },
  { suite: "tiny-mirror", name: "sampling", fault: "penalties-per-step", outputs: ["golden tokens", "logprobs"] },
  { suite: "tiny-mirror", name: "sampling", fault: "processing-bonus-only", outputs: ["golden tokens", "logprobs"] },
  { suite: "tiny-mirror", name: "sampling", fault: "speculated-logprobs-zero", outputs: ["logprobs"] },
  { suite: "tiny-mirror", name: "sampling", fault: "min-tokens-per-step", outputs: ["golden tokens", "logprobs"] },
];

describe("validate reports exactly the broken laws", () => {
  for (const { suite, name, fault, outputs } of SCENARIOS) {
    it(`${suite}/${name} ${fault ?? "(no fault)"}`, async () => {
      const run = await reference(suite, name, fault ? [fault] : []);
      const report = await validateRun(suite, name, run.lines, run.trace);
      const engine = await checkRun(
        caseWithFaults(goldenCase(suite, name).case, fault ? [fault] : []),
        run.result,
        await targetOnly(suite, name),
      );
      const engineFailing = engine.filter((law) => law.status === "fails").map((law) => law.law);
      const traceVisible = [...engineFailing].sort();
      const found = failing(report);
      expect(found.trace).toEqual(traceVisible);
      expect(found.outputs).toEqual(outputs);
      expect(report.exitCode).toBe(found.trace.length + found.outputs.length > 0 ? 1 : 0);
      if (fault) expect(engineFailing.length).toBeGreaterThan(0);
      if (fault === "leaked-rejected-slots") {
        // Seen from the trace alone: the rejected verify slots are never released.
        expect(engineFailing).toEqual([KV_CONSERVATION]);
        const kv = report.traces[0].laws.find((law) => law.law === KV_CONSERVATION);
        expect(kv?.violation?.message).toMatch(/temporary row.*still held after step/);
      }
      // Every failure names its first divergence.
      for (const law of report.traces[0].laws.filter((candidate) => candidate.status === "fails"))
        expect(law.violation?.message).toBeTruthy();
    });
  }
});
