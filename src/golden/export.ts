// `specconf export`: the models of golden suites, for other engines. ONNX: the exact graphs the golden
// digests name (target.onnx, and the draft graph). HF: the target as a Llama checkpoint, the standalone
// draft (a copy of the target) and, for EAGLE and EAGLE-3 suites, the head's checkpoint. GGUF (llama.cpp): the
// target and the standalone draft as F32 llama-architecture files (gguf.ts). Each suite directory
// gets a manifest.json saying which draft reproduces the golden file's rounds. Everything is built in
// memory first; files are then written atomically.
import { join } from "node:path";
import { loadModels } from "../case/models.ts";
import type { Golden } from "./schema.ts";
import { writeFilesAtomic } from "../schema/atomic-write.ts";
import { ggufArchitecture, ggufFamilyUnsupported, modelGgufFiles } from "../export/gguf-families.ts";
import { eagle3Checkpoint, EAGLE3_ARCHITECTURE } from "../export/eagle3-hf.ts";
import { eagleCheckpoint, type CheckpointFiles } from "../export/hf.ts";
import { hfArchitecture, modelCheckpoint } from "../export/hf-families.ts";
import { defaultDraftSpec, modelFamiliesOf } from "../model/spec.ts";
import { BadInputError } from "../errors/bad-input.ts";

export type ExportFormat = "onnx" | "hf" | "gguf";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["onnx", "hf", "gguf"];

export function planExport(golden: Golden, format: ExportFormat): CheckpointFiles {
  const models = loadModels(golden.cases[0].case);
  const spec = models.spec;
  const suite = golden.suite;
  const draft = models.draft;
  // Issue 29's families go out in the architectures that compute them exactly; llama.cpp lacks some of them.
  const unsupported = format === "gguf" ? ggufFamilyUnsupported(spec) : undefined;
  if (unsupported)
    throw new BadInputError(`suite ${suite}: no GGUF: ${unsupported}`, { jsonPath: "/cases/0/case/model" });
  const families = modelFamiliesOf(spec);
  if (families.length > 0 && format !== "onnx" && (draft?.eagle || draft?.eagle3))
    throw new BadInputError(`suite ${suite}: trained draft heads of ${families.join(", ")} models are not exported`, {
      jsonPath: "/cases/0/case/draft",
    });
  const files: CheckpointFiles = new Map();
  const add = (dir: string, checkpoint: CheckpointFiles) => {
    for (const [name, content] of checkpoint) files.set(`${suite}/${dir}/${name}`, content);
  };
  const draftKind = draft?.spec.kind ?? null;
  const manifest: Record<string, unknown> = {
    suite,
    format,
    golden: `golden/${suite}.json`,
    dtype: spec.dtype,
    models: {} as Record<string, unknown>,
  };
  const entries = manifest.models as Record<string, unknown>;
  if (format === "onnx") {
    files.set(`${suite}/target.onnx`, models.target.graph.bytes);
    entries.target = { file: "target.onnx", digest: models.target.graph.digest, spec };
    if (draft) {
      const name = `${draft.spec.kind}.onnx`;
      files.set(`${suite}/${name}`, draft.graphs[0].bytes);
      entries.draft = { file: name, digest: draft.graphs[0].digest, spec: draft.spec };
    }
    manifest.callingConvention =
      "inputs tokens [T] int64, positions [T] int64, hidden_in [T, H] (draft graphs), k_cache/v_cache [layers, slots, kvDim], ctx_slots [C] int64, mask [T, C + T] additive; outputs logits [T, V], hidden [T, H], k_new/v_new [layers, T, kvDim] (see src/model/graphs.ts)";
    if (draft?.eagle3) {
      manifest.eagle3 =
        "EAGLE-3: the target graph also outputs layer_hidden [layers + 1, T, H] (the residual stream entering each layer, then the last layer's output before the final norm); the draft takes aux_in [T, auxLayers * H], the residual streams the checkpoint's auxiliary layer ids name (id k is the input of layer k, layer_hidden[k]; k = layers: the last layer's output), concatenated in the checkpoint's order, with hidden_in zero on those rows (draft-decode rows: hidden_in the draft's own hidden, aux_in zero); its logits rank the draft vocabulary: draft id d drafts target id d + d2t[d]";
      entries.eagle3 = {
        auxLayers: draft.eagle3.options.auxLayers,
        normBeforeFc: draft.eagle3.options.normBeforeFc,
        d2t: [...draft.eagle3.input.d2t],
      };
    }
  } else if (format === "gguf") {
    // The standalone draft is the mirror's (an exact copy), as in the HF export: it accepts every draft.
    const gguf = modelGgufFiles(models, defaultDraftSpec("mirror"), suite);
    const architecture = ggufArchitecture(spec);
    files.set(`${suite}/target.gguf`, gguf.target);
    files.set(`${suite}/draft.gguf`, gguf.draft!);
    entries.target = { file: "target.gguf", architecture, onnxDigest: models.target.graph.digest };
    entries.draft = {
      file: "draft.gguf",
      architecture,
      role: "standalone draft: a copy of the target; in draft-model mode it predicts the target's greedy tokens, so every draft is accepted",
    };
    manifest.ggufType = "F32";
    manifest.notes = [
      ...gguf.notes,
      "q/k rows permuted per head for llama.cpp's interleaved RoPE (as convert_hf_to_gguf.py does)",
      ...(draft?.eagle ? ["the EAGLE head has no GGUF form: not exported"] : []),
      ...(draft?.eagle3 ? ["the EAGLE-3 draft has no GGUF form: not exported"] : []),
    ];
  } else {
    add(
      "target",
      modelCheckpoint(spec, models.target.weights, { digest: models.target.graph.digest, role: "target", suite }),
    );
    add(
      "draft",
      modelCheckpoint(spec, models.target.weights, {
        digest: models.target.graph.digest,
        role: "standalone-draft",
        suite,
      }),
    );
    const architecture = hfArchitecture(spec);
    entries.target = { dir: "target", architecture, onnxDigest: models.target.graph.digest };
    entries.draft = {
      dir: "draft",
      architecture,
      role: "standalone draft: a copy of the target; in draft-model mode it predicts the target's greedy tokens, so every draft is accepted",
    };
    if (draft?.eagle) {
      add(
        "eagle",
        eagleCheckpoint(spec, models.target.weights, draft.eagle, {
          digest: draft.graphs[0].digest,
          role: "eagle",
          suite,
        }),
      );
      entries.eagle = { dir: "eagle", architecture: "LlamaForCausalLMEagle", onnxDigest: draft.graphs[0].digest };
    }
    if (draft?.eagle3Head && draft.eagle3) {
      add(
        "eagle3",
        eagle3Checkpoint(spec, models.target.weights, draft.eagle3Head, draft.eagle3.options.auxLayers, {
          digest: draft.graphs[0].digest,
          role: "eagle3",
          suite,
        }),
      );
      entries.eagle3 = { dir: "eagle3", architecture: EAGLE3_ARCHITECTURE, onnxDigest: draft.graphs[0].digest };
    }
  }
  manifest.reproduces =
    draftKind === "eagle"
      ? "the golden rounds (accept lengths, first-round drafts) are the EAGLE head's: run the target with the eagle checkpoint as EAGLE draft"
      : draftKind === "eagle3"
        ? "the golden rounds (accept lengths, first-round drafts) are the EAGLE-3 head's: run the target with the eagle3 checkpoint as EAGLE-3 draft (auxiliary layers and d2t from its config and tensors)"
        : draftKind
          ? `the golden rounds are the ${draftKind}'s, which accepts every draft: run the target with the standalone draft in draft-model mode (or any exact copy of the target)`
          : "target-only";
  files.set(`${suite}/manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  return files;
}

/** Writes one suite's files, all or none (src/schema/atomic-write.ts). */
export function writeExport(outDir: string, files: CheckpointFiles): string[] {
  const entries = [...files].map(([path, text]) => ({ path: join(outDir, path), text }));
  writeFilesAtomic(entries);
  return entries.map((entry) => entry.path);
}
