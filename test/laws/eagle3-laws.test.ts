// The EAGLE-3 laws against the bug classes they are written for, not only the engine's three faults: on a
// clean run (chains and trees, both EAGLE-3 drafts, batches, chunked prefill) aux provenance and draft
// vocabulary hold; each kind of hand-edited trace fails them (a layer read on the other side of its
// boundary, a state read after the final norm, one of another request or position or from a draft forward,
// a missing or extra state, aux states on a draft step; a drafted id outside the draft vocabulary, a child
// outside it, a draft id outside the draft vocabulary, a map applied twice or not at all). And the reading of
// the checkpoint is the config's: another config (layer ids) makes the same clean trace fail.
import { beforeAll, describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig, type EngineConfig } from "../../src/case/engine-config.ts";
import { loadModels } from "../../src/case/models.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { checkAuxProvenance } from "../../src/laws/aux-provenance.ts";
import { checkDraftVocabulary } from "../../src/laws/draft-vocabulary.ts";
import { defaultDraftSpec, type DraftKind } from "../../src/model/spec.ts";
import { eagle3ReadingOf, readEagle3Config, type Eagle3Reading } from "../../src/reference/eagle3-reading.ts";
import type { Trace, TraceRow } from "../../src/trace/schema.ts";

function eagle3Case(kind: DraftKind, engine: Partial<EngineConfig> = {}): Case {
  return {
    formatVersion: 1,
    model: { preset: "small-gqa" },
    draft: defaultDraftSpec(kind, 1, { normBeforeFc: true }),
    engine: defaultEngineConfig({ numSteps: 3, chunkSize: 3, pageSize: 2, poolSlots: 512, ...engine }),
    workload: {
      requests: [
        { id: 0, prompt: [1, 5, 9, 13, 17, 3, 4, 8, 21], maxNewTokens: 8, arrivalStep: 0 },
        { id: 1, prompt: [1, 5, 9, 13, 17, 22, 7], maxNewTokens: 7, arrivalStep: 0 },
      ],
      aborts: [],
    },
  };
}

interface Run {
  trace: Trace;
  reading: Eagle3Reading;
}

const runs = new Map<string, Run>();
beforeAll(async () => {
  for (const kind of ["eagle3", "eagle3-mirror"] as const)
    for (const topk of [1, 2]) {
      const testCase = eagle3Case(kind, topk === 1 ? {} : { topk, numDraftTokens: 5 });
      const result = await runCase(testCase);
      const models = loadModels(testCase);
      runs.set(`${kind}/${topk}`, { trace: result.trace, reading: eagle3ReadingOf(models.spec, models.draft)! });
    }
});

/** The trace with one row edited: the first row of `phase` matching `where`. */
function edited(
  trace: Trace,
  phase: string,
  edit: (row: TraceRow) => void,
  where: (row: TraceRow) => boolean = () => true,
): Trace {
  const copy = structuredClone(trace);
  for (const event of copy.events) {
    if (event.phase !== phase) continue;
    const row = event.rows.find(where);
    if (row) {
      edit(row);
      return copy;
    }
  }
  throw new Error(`no ${phase} row to edit`);
}

describe("EAGLE-3 laws", () => {
  it("hold on clean runs: chains and trees, the head and the mirror", () => {
    for (const [name, { trace, reading }] of runs) {
      const aux = checkAuxProvenance(trace, reading.auxLayers);
      const vocabulary = checkDraftVocabulary(trace, reading);
      expect(aux.status, `${name}: ${aux.violation?.message}`).toBe("holds");
      expect(vocabulary.status, `${name}: ${vocabulary.violation?.message}`).toBe("holds");
      expect(aux.checked).toBeGreaterThan(10);
      expect(vocabulary.checked).toBeGreaterThan(10);
    }
  });

  it("the checkpoint's reading: layer ids and norm_before_fc from config.json, d2t offsets, no d2t is the identity", () => {
    const { reading } = runs.get("eagle3/1")!;
    expect(reading.auxLayers).toEqual([0, 1, 2]);
    expect(reading.normBeforeFc).toBe(true);
    const config = { eagle_config: { eagle_aux_hidden_state_layer_ids: [2, 0] }, draft_vocab_size: 3 };
    const read = readEagle3Config(config, 8, [4, 4, 5]);
    expect(read.auxLayers).toEqual([2, 0]);
    expect([...read.draftToTarget]).toEqual([4, 5, 7]);
    expect([...read.inDraftVocabulary]).toEqual([0, 0, 0, 0, 1, 1, 0, 1]);
    expect([...readEagle3Config(config, 8, undefined).draftToTarget]).toEqual([0, 1, 2]);
    expect(() => readEagle3Config(config, 8, [4, 4])).toThrow(/d2t has 2 entries/);
    expect(() => readEagle3Config(config, 6, [4, 4, 5])).toThrow(/outside the vocabulary/);
    // The same clean trace, read against a checkpoint naming other layers, fails.
    const { trace } = runs.get("eagle3/1")!;
    expect(checkAuxProvenance(trace, [1, 1, 2]).status).toBe("fails");
    expect(checkAuxProvenance(trace, [0, 1]).status).toBe("fails");
  });

  const auxEdits: [string, (row: TraceRow) => void, RegExp][] = [
    [
      "a layer read one off (its output, not its input)",
      (row) => (row.aux![1].layer += 1),
      /checkpoint's id 1 names stream 1/,
    ],
    ["the last layer read after the final norm", (row) => (row.aux![2].normed = true), /after the final norm/],
    ["a state of another position", (row) => (row.aux![0].row += 1), /expected request \d+ at position/],
    ["no aux states, a hidden state instead", (row) => delete row.aux, /not the checkpoint's 3 auxiliary layers/],
    ["one state too few", (row) => row.aux!.pop(), /is fed 2 auxiliary states/],
  ];
  for (const [what, edit, message] of auxEdits) {
    it(`aux provenance fails: ${what}`, () => {
      const { trace, reading } = runs.get("eagle3-mirror/1")!;
      const result = checkAuxProvenance(edited(trace, "draft-extend", edit), reading.auxLayers);
      expect(result.status).toBe("fails");
      expect(result.violation!.message).toMatch(message);
    });
  }

  it("aux provenance fails: a state from another request's row, from a draft forward, on a draft step", () => {
    const { trace, reading } = runs.get("eagle3/2")!;
    // Request 1's extend row fed from request 0's prefill row of the same event.
    const otherRequest = edited(
      trace,
      "draft-extend",
      (row) => {
        const source = trace.events[row.aux![0].event];
        row.aux![0].row = source.rows.findIndex((candidate) => candidate.request !== row.request);
      },
      (row) => row.aux !== undefined,
    );
    expect(checkAuxProvenance(otherRequest, reading.auxLayers).violation?.message).toMatch(/expected request/);
    const draftEvent = trace.events.find((event) => event.phase === "draft-decode")!;
    const fromDraft = edited(trace, "draft-extend", (row) => (row.aux![0].event = draftEvent.index));
    expect(checkAuxProvenance(fromDraft, reading.auxLayers).violation?.message).toMatch(/not a target forward/);
    const onStep = edited(trace, "draft-decode", (row) => (row.aux = [{ event: 0, row: 0, layer: 0, normed: false }]));
    expect(checkAuxProvenance(onStep, reading.auxLayers).violation?.message).toMatch(/draft's own hidden state/);
  });

  it("draft vocabulary fails: an id outside the draft vocabulary, a child outside it, a draft id past its end, the map applied twice", () => {
    const { trace, reading } = runs.get("eagle3/2")!;
    const outside = [...reading.inDraftVocabulary.keys()].find((id) => reading.inDraftVocabulary[id] === 0)!;
    const cases: [Trace, RegExp][] = [
      // The draft argmax dropped from the trace: only the image can be judged, and the id is outside it.
      [
        edited(trace, "draft-decode", (row) => {
          row.predict = outside;
          delete row.draftPredict;
          row.children = undefined;
        }),
        /not in the draft vocabulary/,
      ],
      [edited(trace, "draft-decode", (row) => (row.children![1].token = outside)), /not in the draft vocabulary/],
      [
        edited(
          trace,
          "draft-extend",
          (row) => (row.draftPredict = reading.draftVocab),
          (row) => row.draftPredict !== undefined,
        ),
        /outside the draft vocabulary/,
      ],
      [
        edited(
          trace,
          "draft-decode",
          (row) => (row.predict = reading.draftToTarget[row.predict! % reading.draftVocab]),
          (row) => reading.draftToTarget[row.predict! % reading.draftVocab] !== row.predict,
        ),
        /by the checkpoint's d2t/,
      ],
    ];
    for (const [bad, message] of cases) {
      const result = checkDraftVocabulary(bad, reading);
      expect(result.status).toBe("fails");
      expect(result.violation!.message).toMatch(message);
    }
  });
});
