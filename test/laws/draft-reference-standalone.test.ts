// Issue 25 item 6: a standalone draft (mirror, noisy and truncated mirror: an ordinary causal LM over the tokens)
// is checked by draft reference from the tokens alone. A trace with no hidden-state provenance (what a
// draft-model engine writes: its draft takes no hidden state), or with no draft-extend events at all, is
// checked row for row, where the provenance reading says "not checkable". The draft-model-position-shifted
// fault (decode rows fed one position late, anchors and attended KV right) is caught that way, while
// positions, lossless and acceptance correctness hold, and the same fault leaves an EAGLE head untouched.
import { describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultCase } from "../../src/case/default-case.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { loadModels } from "../../src/case/models.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkDraftReference } from "../../src/laws/draft-reference.ts";
import type { DraftKind } from "../../src/model/spec.ts";
import { ReferenceOracle } from "../../src/reference/oracle.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { checkRun } from "../helpers/check-run.ts";

function standaloneCase(draft: DraftKind, faults: FaultName[] = [], topk = 1): Case {
  const base = defaultCase({
    preset: "tiny",
    draft,
    seed: 7,
    numRequests: 3,
    maxNewTokens: 10,
    engine: { numSteps: 3, topk, numDraftTokens: topk > 1 ? 5 : 4, chunkSize: 3, pageSize: 2, faults },
  });
  return {
    ...base,
    workload: { ...base.workload, requests: base.workload.requests.map((r) => ({ ...r, arrivalStep: 0 })) },
  };
}

/** The trace as a draft-model engine writes it: no row names a hidden state. */
function withoutProvenance(trace: Trace): Trace {
  return {
    ...trace,
    events: trace.events.map((event) => ({ ...event, rows: event.rows.map(({ hidden: _hidden, ...row }) => row) })),
  };
}

/** An engine that records no draft extend: rounds are its draft-decode rows and the verify that ends them. */
function withoutExtends(trace: Trace): Trace {
  return { ...trace, events: trace.events.filter((event) => event.phase !== "draft-extend") };
}

async function draftReference(testCase: Case, trace: Trace, kind: DraftKind | undefined = testCase.draft?.kind) {
  const oracle = await ReferenceOracle.create(loadModels(testCase), testCase.engine.runtime);
  return checkDraftReference(trace, oracle, kind);
}

describe("draft reference for standalone drafts, from the tokens alone", () => {
  for (const draft of ["mirror", "noisy-mirror", "truncated-mirror"] as const)
    it(`${draft}: holds on the reference engine's trace, without provenance and without extends`, async () => {
      const testCase = standaloneCase(draft);
      const { trace } = await runCase(testCase);
      const decodeRows = trace.events
        .filter((event) => event.phase === "draft-decode")
        .reduce((sum, event) => sum + event.rows.length, 0);
      expect(decodeRows).toBeGreaterThan(0);
      const full = await draftReference(testCase, trace);
      expect(full.status, full.violation?.message).toBe("holds");
      const bare = await draftReference(testCase, withoutProvenance(trace));
      expect(bare.status, bare.violation?.message).toBe("holds");
      expect(bare.checked).toBe(full.checked);
      const decodeOnly = await draftReference(testCase, withoutExtends(withoutProvenance(trace)));
      expect(decodeOnly.status, decodeOnly.violation?.message).toBe("holds");
      expect(decodeOnly.checked).toBe(decodeRows);
      // Read through provenance (what every draft got before issue 25), the bare trace shows nothing.
      expect((await draftReference(testCase, withoutProvenance(trace), "tapped-mirror")).status).toBe("not-checkable");
    });

  it("a standalone tree (topk 2) is read through its provenance and holds", async () => {
    const testCase = standaloneCase("noisy-mirror", [], 2);
    const { trace } = await runCase(testCase);
    const result = await draftReference(testCase, trace);
    expect(result.status, result.violation?.message).toBe("holds");
  });

  for (const draft of ["noisy-mirror", "truncated-mirror"] as const)
    it(`${draft} with draft-model-position-shifted: draft reference fails, from the tokens alone too`, async () => {
      const testCase = standaloneCase(draft, ["draft-model-position-shifted"]);
      const run = await runCase(testCase);
      const baseline = await runCase({
        ...testCase,
        engine: { ...testCase.engine, mode: "target-only", faults: [] },
      });
      const verdicts = new Map((await checkRun(testCase, run, baseline)).map((law) => [law.law, law.status]));
      expect(verdicts.get("draft reference")).toBe("fails");
      // Anchors, slots and attended KV are right and the output is the target's: nothing else sees it.
      for (const law of ["positions", "lossless", "acceptance correctness", "phase contracts", "reference decode"])
        expect(verdicts.get(law), law).toBe("holds");
      const bare = await draftReference(testCase, withoutExtends(withoutProvenance(run.trace)));
      expect(bare.status).toBe("fails");
      expect(bare.violation?.event).toBeDefined();
    });

  it("the fault leaves drafts fed a hidden state (an EAGLE head) as they were", async () => {
    const clean = await runCase(standaloneCase("eagle"));
    const faulty = await runCase(standaloneCase("eagle", ["draft-model-position-shifted"]));
    expect(faulty.trace.events).toEqual(clean.trace.events);
  });
});
