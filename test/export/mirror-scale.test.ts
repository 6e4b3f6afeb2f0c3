// Issue 34, part 6: a mirror-family standalone draft exported as a Hugging Face checkpoint computes the mirror
// graph's scaled logits (src/export/standalone-draft.ts), so an engine loading it scores trees as the reference
// does. The checkpoint is read back with the independent safetensors reader (test/helpers/checkpoint-read.ts)
// and run through the float64 TypeScript forward; its logits and top-2 scores are compared with the case's ONNX
// mirror graph, for the model cache's export (what `check --engine` sends) and the golden export's draft/.
// Along a greedy chain, the unscaled draft would let a K = 2, N = 3 tree put a second root child ahead of the
// chain's depth-2 node (the shrunk case: S = 2, K = 2, N = 3) where the graph and the export do not.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Case } from "../../src/case/case.ts";
import { loadModels } from "../../src/case/models.ts";
import { STANDALONE_DRAFT_VERSION, withLogitScale } from "../../src/export/standalone-draft.ts";
import { planExport, writeExport } from "../../src/golden/export.ts";
import { defaultDraftSpec, MIRROR_LOGIT_SCALE, type DraftSpec, type ModelSpec } from "../../src/model/spec.ts";
import type { TargetWeights } from "../../src/model/weights.ts";
import { ModelCache } from "../../src/sources/model-cache.ts";
import { fromLinear, layerFrom, readSafetensors } from "../helpers/checkpoint-read.ts";
import { golden } from "../helpers/golden-runs.ts";
import {
  chainBreakingRows,
  expectMirrorLogits,
  greedyChain,
  mirrorGraphRows,
  standaloneRows,
} from "../helpers/mirror-logits.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-mirror-scale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A checkpoint directory's config.json and weights, by HF names only. */
function readCheckpoint(path: string): { config: Record<string, any>; weights: TargetWeights } {
  const config = JSON.parse(readFileSync(join(path, "config.json"), "utf8"));
  const tensors = readSafetensors(join(path, "model.safetensors"));
  const weights: TargetWeights = {
    embed: tensors.get("model.embed_tokens.weight")!.values,
    layers: Array.from({ length: config.num_hidden_layers }, (_, l) => layerFrom(tensors, `model.layers.${l}`)),
    finalNorm: tensors.get("model.norm.weight")!.values,
    lmHead: fromLinear(tensors.get("lm_head.weight")!),
  };
  return { config, weights };
}

/** The config's shape is the spec's (the forward below runs the spec with the checkpoint's weights). */
function expectShape(config: Record<string, any>, spec: ModelSpec): void {
  expect({
    vocab: config.vocab_size,
    hidden: config.hidden_size,
    heads: config.num_attention_heads,
    kvHeads: config.num_key_value_heads,
    headDim: config.head_dim,
    intermediate: config.intermediate_size,
    ropeTheta: config.rope_theta,
    rmsEps: config.rms_norm_eps,
    bosId: config.bos_token_id,
  }).toEqual({
    vocab: spec.vocab,
    hidden: spec.hidden,
    heads: spec.heads,
    kvHeads: spec.kvHeads,
    headDim: spec.headDim,
    intermediate: spec.intermediate,
    ropeTheta: spec.ropeTheta,
    rmsEps: spec.rmsEps,
    bosId: spec.bosId,
  });
}

/** A golden suite's first case with the given draft. */
function caseWith(suite: string, draft: DraftSpec): Case {
  const testCase = golden(suite).cases[0].case;
  return { ...testCase, draft };
}

/** The graph tokens of the case's first prompt (BOS is the mirror's constant prefix) and a greedy chain after it. */
function chainTokens(testCase: Case, spec: ModelSpec, weights: TargetWeights): number[] {
  const prompt = testCase.workload.requests[0].prompt;
  expect(prompt[0]).toBe(spec.bosId);
  return greedyChain(spec, weights, prompt.slice(1), 12);
}

const CASES: [string, string, DraftSpec][] = [
  ["tiny mirror (float32)", "tiny-mirror", defaultDraftSpec("mirror")],
  ["tiny-f64 mirror (float64)", "tiny-f64-eagle", defaultDraftSpec("mirror")],
  [
    "small-gqa truncated mirror, 1 layer",
    "small-gqa-mirror",
    { ...defaultDraftSpec("truncated-mirror"), truncatedLayers: 1 },
  ],
];

describe("the mirror family's 2^16 logit scale in the Hugging Face export", () => {
  const unscaledBreaks: number[][] = [];

  for (const [what, suite, draft] of CASES) {
    it(`${what}: the model cache's standalone draft computes the mirror graph's logits and tree scores`, async () => {
      const testCase = caseWith(suite, draft);
      const models = loadModels(testCase);
      const files = new ModelCache(join(dir, "cache")).files(testCase, ["hf"]).hf!;
      expect(basename(files.draft!)).toBe(`${models.draft!.graphs[0].digest}.draft${STANDALONE_DRAFT_VERSION}`);
      const { config, weights } = readCheckpoint(files.draft!);
      expect(config.specconf).toMatchObject({ role: "standalone-draft", logitScale: MIRROR_LOGIT_SCALE });
      expect(config.num_hidden_layers).toBe(draft.kind === "truncated-mirror" ? 1 : models.spec.layers);
      expectShape(config, models.spec);
      const tokens = chainTokens(testCase, models.spec, weights);
      const graph = await mirrorGraphRows(models, tokens);
      const exported = standaloneRows(models.spec, weights, tokens);
      const error = expectMirrorLogits(models.spec, exported, graph, what);
      console.log(
        `${what}: ${tokens.length} rows, max |exported - graph| / (logitStd * 2^16) = ${error.toExponential(2)}`,
      );
      expect(chainBreakingRows(exported)).toEqual(chainBreakingRows(graph));
      expect(chainBreakingRows(graph)).toEqual([]);
      // Without the scale (the LM head as the target's), the same rows rank a second root child first.
      unscaledBreaks.push(chainBreakingRows(standaloneRows(models.spec, withLogitScale(weights, 2 ** -16), tokens)));
    });
  }

  it("the unscaled draft would break the chain in a K = 2 tree on some of those rows (what the scale prevents)", () => {
    expect(unscaledBreaks).toHaveLength(CASES.length);
    console.log(`rows breaking the chain without the scale: ${unscaledBreaks.map((rows) => rows.length).join(", ")}`);
    expect(unscaledBreaks.flat().length).toBeGreaterThan(0);
  });

  it("the golden export's draft/ is the target with the scale in its LM head, and computes the mirror's logits", async () => {
    writeExport(dir, planExport(golden("tiny-mirror"), "hf"));
    const target = readCheckpoint(join(dir, "tiny-mirror", "target"));
    const draft = readCheckpoint(join(dir, "tiny-mirror", "draft"));
    expect(draft.config.specconf.logitScale).toBe(MIRROR_LOGIT_SCALE);
    expect(draft.weights.lmHead).toEqual(target.weights.lmHead.map((value) => value * MIRROR_LOGIT_SCALE));
    expect({ ...draft.weights, lmHead: [] }).toEqual({ ...target.weights, lmHead: [] });
    const manifest = JSON.parse(readFileSync(join(dir, "tiny-mirror", "manifest.json"), "utf8"));
    expect(manifest.models.draft.logitScale).toBe(MIRROR_LOGIT_SCALE);
    const testCase = golden("tiny-mirror").cases[0].case;
    const models = loadModels(testCase);
    const tokens = chainTokens(testCase, models.spec, draft.weights);
    expectMirrorLogits(
      models.spec,
      standaloneRows(models.spec, draft.weights, tokens),
      await mirrorGraphRows(models, tokens),
      "golden tiny-mirror draft/",
    );
  });
});
