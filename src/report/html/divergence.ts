// The first place two runs of one case part ways. Engines batch differently (the reference packs requests into
// one forward; an external engine may run them one by one), so events are not compared by index: each
// request's own view of the run (the phase, its rows' tokens, positions and predictions, its verify result)
// is compared step by step, and the earliest difference in the first run wins.
import type { Trace, TraceEvent } from "../../trace/schema.ts";

export interface Divergence {
  request: number;
  /** The events where it shows, in each run. */
  eventA: number;
  eventB?: number;
  /** What differs, one line. */
  what: string;
}

interface RequestStep {
  event: number;
  key: string;
  text: string;
}

function stepsOf(trace: Trace): Map<number, RequestStep[]> {
  const steps = new Map<number, RequestStep[]>();
  for (const event of trace.events) {
    for (const request of new Set(event.rows.map((row) => row.request))) {
      const list = steps.get(request) ?? [];
      list.push({ event: event.index, ...describe(event, request) });
      steps.set(request, list);
    }
  }
  return steps;
}

function describe(event: TraceEvent, request: number): { key: string; text: string } {
  const rows = event.rows.filter((row) => row.request === request);
  const tokens = rows.map(
    (row) => `${row.token}@${row.position}${row.predict !== undefined ? `->${row.predict}` : ""}`,
  );
  const result = event.verify?.find((entry) => entry.request === request);
  const verify = result ? ` accept ${result.acceptLen} bonus ${result.bonus}` : "";
  const text = `${event.phase} ${tokens.join(" ")}${verify}`;
  return { key: text, text };
}

export function firstDivergence(a: Trace, b: Trace): Divergence | undefined {
  const stepsA = stepsOf(a);
  const stepsB = stepsOf(b);
  let first: Divergence | undefined;
  for (const [request, listA] of stepsA) {
    const listB = stepsB.get(request) ?? [];
    const at = listA.findIndex((step, i) => listB[i]?.key !== step.key);
    if (at < 0) continue;
    const stepA = listA[at];
    const stepB = listB[at];
    if (first && first.eventA <= stepA.event) continue;
    first = {
      request,
      eventA: stepA.event,
      ...(stepB ? { eventB: stepB.event } : {}),
      what: `request ${request}: ${stepA.text} | ${stepB ? stepB.text : "(no such step)"}`,
    };
  }
  return first;
}
