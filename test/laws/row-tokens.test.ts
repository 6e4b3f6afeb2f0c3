// Law "rows carry request tokens": holds on the reference engine's traces (chains, trees, multi-layer,
// chunked prefill, retracts, aborts, target-only decode), fails on the chunked-tail-token fault and on
// every kind of row whose token is edited by hand, judges a third party's chain from predictions alone,
// and turns `specconf validate` on a trace with a wrong prefill token from exit 0 into exit 1.
import { beforeAll, describe, expect, it } from "vitest";
import type { AbortEvent, Case } from "../../src/case/case.ts";
import { defaultEngineConfig, type EngineConfig } from "../../src/case/engine-config.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkRowTokens, ROW_TOKENS } from "../../src/laws/row-tokens.ts";
import { defaultDraftSpec, type DraftKind } from "../../src/model/spec.ts";
import type { Trace, TraceEvent, TraceRow } from "../../src/trace/schema.ts";
import { failing, reference, validateRun } from "../helpers/golden-runs.ts";

function tokenCase(
  kind: DraftKind,
  engine: Partial<EngineConfig> = {},
  faults: FaultName[] = [],
  lifecycle: { aborts?: AbortEvent[]; retracts?: AbortEvent[] } = {},
): Case {
  return {
    formatVersion: 1,
    model: { preset: "tiny" },
    draft: defaultDraftSpec(kind),
    engine: defaultEngineConfig({ numSteps: 3, chunkSize: 3, pageSize: 2, poolSlots: 512, faults, ...engine }),
    workload: {
      requests: [
        { id: 0, prompt: [1, 5, 9, 13, 17, 3, 4, 8, 21], maxNewTokens: 10, arrivalStep: 0 },
        { id: 1, prompt: [1, 5, 9, 13, 17, 22, 7], maxNewTokens: 9, arrivalStep: 1 },
      ],
      aborts: lifecycle.aborts ?? [],
      ...(lifecycle.retracts ? { retracts: lifecycle.retracts } : {}),
    },
  };
}

/** The first row of `phase` (and optional extra condition), with its event. */
function findRow(
  trace: Trace,
  phase: TraceEvent["phase"],
  where: (row: TraceRow, event: TraceEvent, index: number) => boolean = () => true,
): { event: TraceEvent; row: TraceRow; index: number } {
  for (const event of trace.events) {
    if (event.phase !== phase) continue;
    const index = event.rows.findIndex((row, i) => where(row, event, i));
    if (index >= 0) return { event, row: event.rows[index], index };
  }
  throw new Error(`no ${phase} row`);
}

/** Edits one row's token and expects the law to fail exactly there. */
function expectFailsAt(trace: Trace, phase: TraceEvent["phase"], where?: Parameters<typeof findRow>[2]): void {
  const broken = structuredClone(trace);
  const { event, row, index } = findRow(broken, phase, where);
  row.token = (row.token + 1) % 64;
  const result = checkRowTokens(broken);
  expect(result.status, `${phase} row edited`).toBe("fails");
  expect(result.violation).toMatchObject({ event: event.index, index, got: row.token });
}

const runs: Record<string, Trace> = {};

beforeAll(async () => {
  const retracts = [{ request: 0, step: 4, beforeForward: 1 }];
  const aborts = [{ request: 1, step: 5, beforeForward: 0 }];
  runs.chain = (await runCase(tokenCase("mirror", {}, [], { retracts, aborts }))).trace;
  runs.tree = (await runCase(tokenCase("noisy-mirror", { topk: 2, numDraftTokens: 6 }))).trace;
  runs.multiLayer = (await runCase(tokenCase("noisy-mirror", { multiLayer: true }, [], { retracts }))).trace;
  runs.targetOnly = (await runCase(tokenCase("mirror", { mode: "target-only" }))).trace;
});

describe("rows carry request tokens", () => {
  it("holds on chains (chunked, retracted, aborted), trees, multi-layer and target-only runs", () => {
    for (const [name, trace] of Object.entries(runs)) {
      const result = checkRowTokens(trace);
      expect(result.status, name).toBe("holds");
      const rows = trace.events.reduce((sum, event) => sum + event.rows.length, 0);
      // Every row is judged when the trace links its drafts (candidate numbers, or a chain's predictions).
      expect(result.checked, name).toBe(rows);
    }
    expect(runs.chain.lifecycle?.map((entry) => entry.kind).sort()).toEqual(["abort", "retract"]);
  });

  it("fails target rows: a prefill token, a re-prefill token after a retract, a decode token, a verify root", () => {
    expectFailsAt(runs.chain, "prefill");
    const retract = runs.chain.lifecycle!.find((entry) => entry.kind === "retract")!;
    expectFailsAt(runs.chain, "prefill", (row, event) => event.index >= retract.beforeEvent && row.request === 0);
    expectFailsAt(runs.targetOnly, "decode");
    expectFailsAt(runs.chain, "verify", (row) => row.parent === -1);
  });

  it("fails draft rows: an extend row's next token, a chain's draft, a tree candidate's token", () => {
    expectFailsAt(runs.chain, "draft-extend");
    expectFailsAt(runs.chain, "draft-decode");
    expectFailsAt(runs.chain, "verify", (row) => row.parent !== -1);
    expectFailsAt(runs.tree, "draft-decode", (_row, event, index) => index > 0 && event.draftStep! > 1);
    expectFailsAt(runs.tree, "verify", (row) => (row.candidate ?? 0) > 2);
  });

  it("fails multi-layer rows: module k's extend row pairs with x_{i+k+1}, its temporary rows with the drafts", () => {
    expectFailsAt(runs.multiLayer, "draft-extend", (_row, event) => event.module === 2);
    expectFailsAt(runs.multiLayer, "draft-decode", (_row, event, index) => event.module === 2 && index === 1);
    expectFailsAt(runs.multiLayer, "verify", (row) => row.parent === 2);
  });

  it("fails the chunked-tail-token fault at the non-final chunk's last draft-extend row", async () => {
    const { trace } = await runCase(tokenCase("mirror", {}, ["chunked-tail-token"]));
    const result = checkRowTokens(trace);
    expect(result.status).toBe("fails");
    const event = trace.events.find((candidate) => candidate.index === result.violation!.event)!;
    const row = event.rows[result.violation!.index!];
    expect(event.phase).toBe("draft-extend");
    // The chunk [0, 3) ends at anchor 2: x_3 = 13 was due, the token sampled from the chunk's logits came.
    expect(row.position).toBe(2);
    expect(result.violation).toMatchObject({ expected: 13 });
    expect(result.violation?.message).toMatch(/x_3 is 13/);
  });

  it("judges a third party's chain from predictions alone; leaves an unlinked tree's drafted rows unjudged", () => {
    const strip = (trace: Trace): Trace => {
      const out = structuredClone(trace);
      for (const event of out.events)
        for (const row of event.rows) {
          delete row.candidate;
          delete row.children;
        }
      return out;
    };
    const chain = strip(runs.chain);
    expect(checkRowTokens(chain)).toMatchObject({ status: "holds", checked: checkRowTokens(runs.chain).checked });
    expectFailsAt(chain, "verify", (row) => row.parent === 2);
    expectFailsAt(chain, "draft-decode", (_row, event) => event.draftStep === 2);
    const tree = strip(runs.tree);
    const result = checkRowTokens(tree);
    expect(result.status).toBe("holds");
    expect(result.checked).toBeLessThan(checkRowTokens(runs.tree).checked);
  });

  it("is not checkable without requests", () => {
    const { requests: _dropped, ...rest } = runs.chain;
    expect(checkRowTokens(rest as Trace).status).toBe("not-checkable");
  });
});

describe("validate with row tokens", () => {
  it("a third-party trace whose prefill row carries a token the prompt does not have fails (exit 1)", async () => {
    const run = await reference("tiny-mirror", "chunked-paged");
    const clean = await validateRun("tiny-mirror", "chunked-paged", run.lines, run.trace);
    expect(clean.exitCode).toBe(0);
    const broken = structuredClone(run.trace);
    const prefill = broken.events.find((event) => event.phase === "prefill")!;
    prefill.rows[1].token = (prefill.rows[1].token + 1) % 64;
    const report = await validateRun("tiny-mirror", "chunked-paged", run.lines, broken);
    expect(report.exitCode).toBe(1);
    expect(failing(report).trace).toContain(ROW_TOKENS);
  });
});
