// A small hand-written draft tree trace (one request, topk 2, S 3, N 4, eagle draft: epsilon 1e-4) that
// pins each rule of tree selection and the selection ties of the two-run laws.
import type { Trace, TraceEvent, TraceRow } from "../../src/trace/schema.ts";

type Child = [number, number, number]; // number, token, score

export const children = (list: Child[]): TraceRow["children"] =>
  list.map(([number, token, score]) => ({ number, token, score }));

/**
 * One request (prompt 1 2 3, output 9 ...), topk 2, S 3, N 4. Scores: 1:0 2:-1 | 3:0 4:-3 5:-1 6:-5 |
 * 7:0 8:-2 9:-1.5 10:-7. Step 2's frontier is {3, 5}; the N - 1 = 3 best are {1, 3, 7}.
 */
export function handTree(): Trace {
  const row = (fields: Partial<TraceRow> & Pick<TraceRow, "token" | "position">): TraceRow => ({
    request: 0,
    ...fields,
  });
  const events: TraceEvent[] = [
    { index: 0, phase: "prefill", rows: [1, 2, 3].map((token, position) => row({ token, position })) },
    {
      index: 1,
      phase: "draft-extend",
      rows: [
        row({ token: 2, position: 0 }),
        row({ token: 3, position: 1 }),
        row({
          token: 9,
          position: 2,
          predict: 10,
          children: children([
            [1, 10, 0],
            [2, 11, -1],
          ]),
          childMargin: 0.5,
        }),
      ],
    },
    {
      index: 2,
      phase: "draft-decode",
      draftStep: 1,
      rows: [
        row({
          token: 10,
          position: 3,
          candidate: 1,
          predict: 20,
          children: children([
            [3, 20, 0],
            [4, 21, -3],
          ]),
        }),
        row({
          token: 11,
          position: 3,
          candidate: 2,
          predict: 22,
          children: children([
            [5, 22, -1],
            [6, 23, -5],
          ]),
        }),
      ],
    },
    {
      index: 3,
      phase: "draft-decode",
      draftStep: 2,
      rows: [
        row({
          token: 20,
          position: 4,
          candidate: 3,
          predict: 30,
          children: children([
            [7, 30, 0],
            [8, 31, -2],
          ]),
        }),
        row({
          token: 22,
          position: 4,
          candidate: 5,
          predict: 32,
          children: children([
            [9, 32, -1.5],
            [10, 33, -7],
          ]),
        }),
      ],
    },
    {
      index: 4,
      phase: "verify",
      rows: [
        row({ token: 9, position: 3, parent: -1, candidate: 0 }),
        row({ token: 10, position: 4, parent: 0, candidate: 1 }),
        row({ token: 20, position: 5, parent: 1, candidate: 3 }),
        row({ token: 30, position: 6, parent: 2, candidate: 7 }),
      ],
      verify: [{ request: 0, acceptIndex: [0, 1, 2, 3], acceptLen: 4, bonus: 40 }],
    },
  ];
  return {
    formatVersion: 1,
    engine: { name: "hand", dtype: "float32", ep: "cpu" },
    config: { topk: 2, draft: { kind: "eagle" } },
    requests: [{ id: 0, prompt: [1, 2, 3], output: [9, 10, 20, 30, 40], finishReason: "length" }],
    events,
  };
}

export function childOf(trace: Trace, number: number): { score: number } {
  for (const event of trace.events)
    for (const row of event.rows) for (const child of row.children ?? []) if (child.number === number) return child;
  throw new Error(`no candidate ${number}`);
}
