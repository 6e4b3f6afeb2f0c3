// A trace as a readable step table: forward by forward, the phase, pool and rows (request, token,
// position, slot written, temporary), the verify results, with the first event that breaks a law
// marked and the violation printed under it.
import type { Case } from "../case/case.ts";
import type { LawResult } from "../laws/law.ts";
import type { Trace, TraceEvent } from "../trace/schema.ts";

export interface StepTableOptions {
  /** Marks this event (the first offending one) with ">>" and prints `note` under it. */
  mark?: { event: number; note: string };
  /** Only events in [from, to] (inclusive). */
  from?: number;
  to?: number;
}

function rowText(event: TraceEvent): string[] {
  const groups = new Map<number, string[]>();
  for (const row of event.rows) {
    const parts = groups.get(row.request) ?? [];
    const slot = row.slot !== undefined ? `/s${row.slot}` : "";
    parts.push(`${row.token}@${row.position}${slot}${row.temporary ? "t" : ""}`);
    groups.set(row.request, parts);
  }
  return [...groups.entries()].map(([request, parts]) => `r${request}: ${parts.join(" ")}`);
}

export function describeCase(testCase: Case): string {
  const { engine, workload } = testCase;
  const model = "preset" in testCase.model ? testCase.model.preset : testCase.model.spec.name;
  const requests = workload.requests.map(
    (request) =>
      `r${request.id} prompt [${request.prompt.join(" ")}] max ${request.maxNewTokens} arrives @${request.arrivalStep}`,
  );
  const events = [
    ...workload.aborts.map(
      (abort) => `abort r${abort.request} at step ${abort.step} before forward ${abort.beforeForward}`,
    ),
    ...(workload.retracts ?? []).map(
      (retract) => `retract r${retract.request} at step ${retract.step} before forward ${retract.beforeForward}`,
    ),
  ];
  return [
    `model ${model}, draft ${testCase.draft?.kind ?? "none"}, ${engine.mode}, S=${engine.numSteps} K=${engine.topk} N=${engine.numDraftTokens}, chunk ${engine.chunkSize ?? "none"}, page ${engine.pageSize}, budget ${engine.tokenBudget}${engine.faults.length ? `, faults ${engine.faults.join(", ")}` : ""}`,
    ...requests.map((text) => `  ${text}`),
    ...events.map((text) => `  ${text}`),
  ].join("\n");
}

export function stepTable(trace: Trace, options: StepTableOptions = {}): string {
  const lines = ["   event step  phase               pool      rows: token@position/slot (t: temporary)"];
  const lifecycle = new Map<number, string[]>();
  for (const entry of trace.lifecycle ?? [])
    lifecycle.set(entry.beforeEvent, [...(lifecycle.get(entry.beforeEvent) ?? []), `${entry.kind} r${entry.request}`]);
  for (const event of trace.events) {
    if (options.from !== undefined && event.index < options.from) continue;
    if (options.to !== undefined && event.index > options.to) continue;
    for (const note of lifecycle.get(event.index) ?? []) lines.push(`   ---   ${note}`);
    const marked = options.mark?.event === event.index;
    const phase = `${event.phase}${event.draftStep ? ` ${event.draftStep}` : ""}${event.module !== undefined ? ` m${event.module}` : ""}`;
    const rows = rowText(event);
    const head = `${marked ? ">>" : "  "} ${String(event.index).padStart(5)} ${String(event.step ?? "").padStart(4)}  ${phase.padEnd(18)}  ${(event.pool ?? event.model ?? "").padEnd(8)}  `;
    lines.push(head + (rows[0] ?? "(no rows)"));
    for (const more of rows.slice(1)) lines.push(" ".repeat(head.length) + more);
    for (const result of event.verify ?? []) {
      const emitted = result.emitted
        ? ` emitted [${result.emitted.join(" ")}]${result.finished ? " finished" : ""}`
        : "";
      lines.push(
        `${" ".repeat(head.length)}accept r${result.request}: len ${result.acceptLen} index [${result.acceptIndex.join(" ")}] bonus ${result.bonus}${emitted}`,
      );
    }
    if (marked) lines.push(`${" ".repeat(head.length)}^ ${options.mark!.note}`);
  }
  return lines.join("\n") + "\n";
}

/**
 * The event to mark: the first failing law's offending event, if it names one; a violation found "after
 * step N" (KV conservation's per-step pool checks) marks the last forward of step N.
 */
export function firstOffence(
  results: readonly LawResult[],
  preferred?: readonly string[],
  trace?: Trace,
): { law: LawResult; event?: number } | undefined {
  const failing = results.filter((result) => result.status === "fails");
  const ordered = [...failing].sort((a, b) => rank(a.law, preferred) - rank(b.law, preferred));
  const law = ordered[0];
  if (!law) return undefined;
  let event = law.violation?.event;
  const step = /after step (\d+)/.exec(law.violation?.message ?? "")?.[1];
  if (event === undefined && step !== undefined && trace) {
    const inStep = trace.events.filter((candidate) => candidate.step === Number(step));
    event = inStep[inStep.length - 1]?.index;
  }
  return { law, event };
}

function rank(law: string, preferred?: readonly string[]): number {
  const index = preferred?.indexOf(law) ?? -1;
  return index < 0 ? Number.MAX_SAFE_INTEGER : index;
}
