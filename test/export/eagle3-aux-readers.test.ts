// Issue 34: which residual stream an EAGLE-3 checkpoint's auxiliary layer id selects, per reader. Each case's head
// is exported as an engine gets it (the model cache: HF config.json, GGUF eagle3.target_layers), the ids are read
// back from both files, and each reader, written as a small function from its documented rule (docs/design.md,
// "EAGLE-3 auxiliary layers", file and function of each), says which streams (the target's layer_hidden index:
// stream k is the input of layer k) it concatenates into fc's input. The reference engine's captured provenance
// (its trace's aux[].layer, from a run of the case) must agree with vLLM, the EAGLE authors and llama.cpp; its first
// drafts must be the head's argmax over the streams llama.cpp's rule selects (float64 forward, tie-aware), so the
// provenance labels the states it actually read. SGLang before PR 25454 reads id k as stream k + 1, the fault.
import { gguf } from "@huggingface/gguf";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { defaultEngineConfig } from "../../src/case/engine-config.ts";
import type { FaultName } from "../../src/case/faults.ts";
import { loadModels } from "../../src/case/models.ts";
import { runCase } from "../../src/engine/run-case.ts";
import { referenceEagle3 } from "../../src/model/eagle3-reference.ts";
import { referenceTarget } from "../../src/model/reference-forward.ts";
import { PRESETS } from "../../src/model/presets.ts";
import { defaultDraftSpec, eagle3AuxLayers } from "../../src/model/spec.ts";
import { draftToTarget } from "../../src/model/weights.ts";
import { ModelCache } from "../../src/sources/model-cache.ts";
import type { Trace } from "../../src/trace/schema.ts";
import { argmaxAndMargin } from "../helpers/checkpoint-read.ts";

/** What a reader feeds fc: the streams it concatenates, in its order; "missing" where its rule captures nothing. */
type Reading = (number | "missing")[];
type Reader = (ids: readonly number[], layers: number) => Reading;

/** A capture inside the decoder loop (`for idx in range(n): if idx in captured: append(stream idx)`): layer order, each once. */
function loopCapture(captured: readonly number[], layers: number): Reading {
  const streams: Reading = [];
  for (let idx = 0; idx < layers; idx++) if (captured.includes(idx)) streams.push(idx);
  return [...streams, ...captured.filter((k) => k >= layers).map((): "missing" => "missing")];
}

const READERS: Record<string, Reader> = {
  // vllm/model_executor/models/llama.py LlamaModel.forward: appends hidden_states + residual before layer(...) when
  // idx in aux_hidden_state_layers (the config's ids, unchanged).
  vLLM: (ids, layers) => loopCapture(ids, layers),
  // SafeAILab/EAGLE modeling_llama_kv.py LlamaModel.forward: the hidden state before the named decoder layers.
  "EAGLE authors": (ids, layers) => loopCapture(ids, layers),
  // common/speculative.cpp: k < n_layer the input of layer k (t_layer_inp[k]), k == n_layer the last output, in
  // the ids' order (features_buf interleaved by k).
  "llama.cpp": (ids, layers) => ids.map((k) => (k <= layers ? k : "missing")),
  // sglang set_eagle3_layers_to_capture before PR 25454: layers_to_capture = [val + 1 for val in layer_ids].
  "SGLang before PR 25454": (ids, layers) =>
    loopCapture(
      ids.map((k) => k + 1),
      layers,
    ),
  // sglang PR 25454: the +1 only when the first id is 1.
  "SGLang since PR 25454": (ids, layers) => loopCapture(ids[0] === 1 ? ids.map((k) => k + 1) : ids, layers),
};

/** The EAGLE authors' own capture set (modeling_llama_kv.py: idx == n - 3 or idx == n // 2 or idx == 2), in loop order. */
function eagleAuthorsDefault(layers: number): number[] {
  return Array.from({ length: layers }, (_, idx) => idx).filter(
    (idx) => idx === layers - 3 || idx === Math.floor(layers / 2) || idx === 2,
  );
}

/** The id lists tried on the 3-layer small-gqa target: the default, unordered ids, ids from 1 up to the last output. */
const ID_LISTS: (number[] | undefined)[] = [undefined, [2, 0, 1], [1, 2, 3]];

function eagle3Case(auxLayers: number[] | undefined, faults: FaultName[] = []): Case {
  return {
    formatVersion: 1,
    model: { preset: "small-gqa" },
    draft: { ...defaultDraftSpec("eagle3", 4, { normBeforeFc: true }), ...(auxLayers ? { auxLayers } : {}) },
    engine: defaultEngineConfig({ numSteps: 2, chunkSize: 3, pageSize: 2, poolSlots: 512, faults }),
    workload: {
      requests: [
        { id: 0, prompt: [1, 5, 9, 13, 17, 3, 4, 8, 21], maxNewTokens: 5, arrivalStep: 0 },
        { id: 1, prompt: [1, 7, 30, 22, 9, 40], maxNewTokens: 5, arrivalStep: 0 },
      ],
      aborts: [],
    },
  };
}

/** The streams every draft-extend row was fed, as its trace records them (they must agree across rows). */
function captured(trace: Trace): number[] {
  const lists = trace.events
    .filter((event) => event.phase === "draft-extend")
    .flatMap((event) => event.rows.map((row) => JSON.stringify(row.aux?.map((source) => source.layer))));
  const distinct = [...new Set(lists)];
  expect(distinct, "every draft-extend row is fed the same layers").toHaveLength(1);
  return JSON.parse(distinct[0]) as number[];
}

interface Exported {
  ids: number[];
  hf: { top: number[]; eagleConfig: number[] };
  gguf: number[];
  layers: number;
  provenance: number[];
  faultProvenance: number[];
  trace: Trace;
  testCase: Case;
}

const dir = mkdtempSync(join(tmpdir(), "specconf-aux-readers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const exported: Exported[] = [];
beforeAll(async () => {
  const cache = new ModelCache(dir);
  for (const auxLayers of ID_LISTS) {
    const testCase = eagle3Case(auxLayers);
    const models = loadModels(testCase);
    const files = cache.files(testCase, ["hf", "gguf"]);
    const config = JSON.parse(readFileSync(join(files.hf!.draft!, "config.json"), "utf8"));
    const metadata = (await gguf(files.gguf!.draft!, { allowLocalFile: true })).metadata as Record<string, unknown>;
    const targetMetadata = (await gguf(files.gguf!.target, { allowLocalFile: true })).metadata as Record<
      string,
      unknown
    >;
    const run = await runCase(testCase);
    const faulty = await runCase(eagle3Case(auxLayers, ["eagle3-aux-layer-off-by-one"]));
    exported.push({
      ids: models.draft!.eagle3!.options.auxLayers,
      hf: {
        top: config.eagle_aux_hidden_state_layer_ids,
        eagleConfig: config.eagle_config.eagle_aux_hidden_state_layer_ids,
      },
      gguf: (metadata["eagle3.target_layers"] as number[]).map(Number),
      layers: Number(targetMetadata["llama.block_count"]),
      provenance: captured(run.trace),
      faultProvenance: captured(faulty.trace),
      trace: run.trace,
      testCase,
    });
  }
}, 120_000);

describe("EAGLE-3 auxiliary layer ids: what each reader selects", () => {
  it("the HF and GGUF exports carry the case's ids unchanged (config.json top level and eagle_config, eagle3.target_layers)", () => {
    expect(exported).toHaveLength(ID_LISTS.length);
    for (const entry of exported) {
      expect(entry.hf.top).toEqual(entry.ids);
      expect(entry.hf.eagleConfig).toEqual(entry.ids);
      expect(entry.gguf).toEqual(entry.ids);
    }
    // Distinct ids, distinct files: the graph digest alone would give the three heads one cached checkpoint.
    expect(new Set(exported.map((entry) => JSON.stringify(entry.gguf))).size).toBe(ID_LISTS.length);
  });

  it("the reference engine reads the streams llama.cpp's rule selects, for every id list", () => {
    for (const { gguf: ids, layers, provenance } of exported)
      expect(provenance, `ids ${ids}`).toEqual(READERS["llama.cpp"](ids, layers));
  });

  it("and the streams vLLM's and the EAGLE authors' rules select wherever those read the ids as given (ascending, distinct, below the last output)", () => {
    let judged = 0;
    for (const { gguf: ids, layers, provenance } of exported) {
      const asGiven = ids.every((k, i) => k < layers && (i === 0 || k > ids[i - 1]));
      for (const reader of ["vLLM", "EAGLE authors"]) {
        const reading = READERS[reader](ids, layers);
        if (asGiven) {
          expect(provenance, `${reader}, ids ${ids}`).toEqual(reading);
          judged += 1;
        } else {
          // Not an agreement claimed: the loop reads layer order (or captures nothing at the last output).
          expect(provenance, `${reader}, ids ${ids}`).not.toEqual(reading);
        }
      }
    }
    expect(judged).toBeGreaterThan(0);
  });

  it("SGLang before PR 25454 reads every id one stream later (the fault eagle3-aux-layer-off-by-one); since PR 25454 only ids from 1", () => {
    for (const { gguf: ids, layers, provenance, faultProvenance } of exported) {
      expect(READERS["SGLang before PR 25454"](ids, layers), `ids ${ids}`).not.toEqual(provenance);
      // The fault records id k as stream k + 1 where that stream exists (the last one past it).
      expect(faultProvenance).toEqual(ids.map((k) => Math.min(k + 1, layers)));
      const since = READERS["SGLang since PR 25454"](ids, layers);
      if (ids[0] === 1) expect(since, `ids ${ids}`).toEqual(READERS["SGLang before PR 25454"](ids, layers));
      else expect(since, `ids ${ids}`).toEqual(READERS.vLLM(ids, layers));
    }
  });

  it("the default ids are the EAGLE authors' capture set from 7 layers up, and below the last output on every target", () => {
    for (let layers = 1; layers <= 64; layers++) {
      const ids = eagle3AuxLayers({ ...PRESETS["small-gqa"], layers });
      expect(ids.every((k) => k >= 0 && k < layers)).toBe(true);
      if (layers >= 7) expect(ids, `${layers} layers`).toEqual(eagleAuthorsDefault(layers));
      if (layers >= 3) expect(new Set(ids).size, `${layers} layers`).toBe(3);
    }
  });

  it("the provenance labels the states read: the reference's first drafts are the head's argmax over llama.cpp's streams", () => {
    let compared = 0;
    for (const { gguf: ids, layers, trace, testCase } of exported) {
      const models = loadModels(testCase);
      const { spec } = models;
      const head = models.draft!.eagle3Head!;
      const targets = draftToTarget(head.d2t);
      const streams = READERS["llama.cpp"](ids, layers) as number[];
      for (const request of testCase.workload.requests) {
        const verify = trace.events.find((event) => event.verify?.some((result) => result.request === request.id));
        if (!verify) continue;
        const rows = verify.rows.filter((row) => row.request === request.id);
        const sequence = [...request.prompt, rows[0].token];
        const anchors = sequence.length - 1;
        const target = referenceTarget(spec, models.target.weights, sequence);
        const aux = new Float64Array(anchors * streams.length * spec.hidden);
        for (let i = 0; i < anchors; i++)
          streams.forEach((stream, part) =>
            aux.set(
              target.streams[stream].subarray(i * spec.hidden, (i + 1) * spec.hidden),
              (i * streams.length + part) * spec.hidden,
            ),
          );
        const tokens = sequence.slice(1);
        const out = referenceEagle3(
          spec,
          models.target.weights,
          head,
          tokens,
          aux,
          new Float64Array(anchors * spec.hidden),
          tokens.map((_, i) => i),
        );
        const { argmax, margin } = argmaxAndMargin(out.logits, anchors - 1, head.d2t.length);
        if (margin < 1e-3) continue; // a near-tie: float32 and float64 may pick either
        expect(rows[1].token, `ids ${ids} request ${request.id}`).toBe(targets[argmax]);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(0);
  });
});
