// Models for external engines, exported on demand into a content-addressed cache: every generated case
// can run on an engine that loads files. A model's directory is named by the digest of the ONNX graph it
// is exported from (the identity traces and golden files use), so the same model is written once and the
// same path always holds the same bytes. Each export is built in memory, written into a temporary
// directory and renamed into place: a reader never sees half a model. An EAGLE-3 head's name also carries its
// auxiliary layer ids: its ONNX graph takes the states as an input, so its digest does not change with the ids,
// while its checkpoint's config.json and GGUF (eagle3.target_layers) do (eagle3ExportName).
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Case } from "../case/case.ts";
import type { AdapterRequest, ModelFormat } from "../adapter/protocol.ts";
import { loadModels, resolveModelSpec, type LoadedModels } from "../case/models.ts";
import { GGUF_DRAFT_KINDS, ggufFileName } from "../export/gguf.ts";
import { exportStem } from "../export/export-name.ts";
import { ggufFamilyUnsupported, modelGgufFiles } from "../export/gguf-families.ts";
import { hfFamilyUnsupported, modelCheckpoint } from "../export/hf-families.ts";
import { eagle3Checkpoint } from "../export/eagle3-hf.ts";
import { eagleCheckpoint, type CheckpointFiles } from "../export/hf.ts";
import { standaloneDraftName, standaloneDraftWeights } from "../export/standalone-draft.ts";
import { draftLogitScale, isStandaloneDraft, modelFamiliesOf, type DraftKind, type ModelSpec } from "../model/spec.ts";

export const DEFAULT_MODEL_CACHE = ".specconf/models";

type ModelFiles = NonNullable<AdapterRequest["models"]["files"]>;

/**
 * Which draft kinds each format can carry. A standalone draft model (mirror: the target with its LM head times 2^16;
 * truncated-mirror: its first layers) is what engines' draft-model mode loads; the EAGLE and EAGLE-3 heads have
 * their own checkpoint layouts; ONNX carries every graph as specconf runs it. ngram needs no model at all.
 */
const DRAFTS_BY_FORMAT: Record<ModelFormat, readonly DraftKind[]> = {
  onnx: ["mirror", "tapped-mirror", "noisy-mirror", "truncated-mirror", "eagle", "eagle3", "eagle3-mirror"],
  hf: ["mirror", "truncated-mirror", "eagle", "eagle3"],
  gguf: [...GGUF_DRAFT_KINDS, "eagle3"], // eagle3: llama.cpp's eagle3 architecture (src/export/gguf-eagle3.ts)
};

/**
 * Issue 29's families (sliding windows, scaled RoPE, hybrids): the HF and GGUF writers carry their standalone
 * drafts only (src/export/hf-families.ts, gguf-families.ts); trained heads of such a target are not exported.
 */
const FAMILY_DRAFTS_BY_FORMAT: Record<ModelFormat, readonly DraftKind[]> = {
  onnx: DRAFTS_BY_FORMAT.onnx,
  hf: ["mirror", "truncated-mirror"],
  gguf: GGUF_DRAFT_KINDS,
};

/**
 * Why none of the formats can carry the spec's family exactly (undefined: one can, or the engine builds models
 * from the spec itself).
 */
export function familyNotExportable(spec: ModelSpec, formats: readonly ModelFormat[]): string | undefined {
  if (modelFamiliesOf(spec).length === 0 || formats.length === 0 || formats.includes("onnx")) return undefined;
  const reasons = formats.map((format) => (format === "hf" ? hfFamilyUnsupported(spec) : ggufFamilyUnsupported(spec)));
  return reasons.includes(undefined) ? undefined : reasons.join("; ");
}

function draftsOf(format: ModelFormat, family: boolean): readonly DraftKind[] {
  return (family ? FAMILY_DRAFTS_BY_FORMAT : DRAFTS_BY_FORMAT)[format];
}

/**
 * Whether the engine can get the case's draft: from some declared format, or (no formats declared) from the
 * spec in the request, which an engine building models itself reads. A draft-free case always fits. `family`:
 * the target is of an issue 29 family (model/spec.ts modelFamiliesOf).
 */
export function draftExportable(kind: DraftKind | undefined, formats: readonly ModelFormat[], family = false): boolean {
  if (kind === undefined || kind === "ngram" || formats.length === 0) return true;
  return formats.some((format) => draftsOf(format, family).includes(kind));
}

/** One model's files in one format: written under `<root>/<format>/<name>` (a file or a directory). */
interface Export {
  name: string;
  /** A single file (its bytes), or a directory's files. */
  content: Uint8Array | CheckpointFiles;
}

function hfExports(models: LoadedModels): { target: Export; draft?: Export } {
  const { spec, target, draft } = models;
  const targetDigest = target.graph.digest;
  const result: { target: Export; draft?: Export } = {
    target: {
      name: exportStem(targetDigest, spec),
      content: modelCheckpoint(spec, target.weights, { digest: targetDigest, role: "target" }),
    },
  };
  if (!draft) return result;
  const digest = draft.graphs[0].digest;
  if (draft.spec.kind === "eagle" && draft.eagle)
    result.draft = {
      name: draftExportStem(models),
      content: eagleCheckpoint(spec, target.weights, draft.eagle, { digest, role: "eagle" }),
    };
  else if (draft.spec.kind === "eagle3" && draft.eagle3Head && draft.eagle3)
    result.draft = {
      name: draftExportStem(models),
      content: eagle3Checkpoint(spec, target.weights, draft.eagle3Head, draft.eagle3.options.auxLayers, {
        digest,
        role: "eagle3",
      }),
    };
  else if (draft.spec.kind === "mirror" || draft.spec.kind === "truncated-mirror") {
    // The target's copy (or first layers) with the mirror's 2^16 logit scale in its LM head; the name carries
    // the standalone draft's export version, so a cache written before the scale was exported is not read.
    const weights = standaloneDraftWeights(models, draft.spec);
    if (typeof weights === "string") throw new Error(weights);
    result.draft = {
      name: draftExportStem(models),
      content: modelCheckpoint(spec, weights, {
        digest,
        role: "standalone-draft",
        logitScale: draftLogitScale(draft.spec),
      }),
    };
  }
  return result;
}

/**
 * An EAGLE-3 head's export name: the graph digest and the layer ids, so two cases whose heads differ only in the
 * ids (same weights, same graph) do not share a cached checkpoint whose config names the other case's ids.
 */
export function eagle3ExportName(digest: string, auxLayers: readonly number[]): string {
  return `${digest}.aux-${auxLayers.join("-")}`;
}

function onnxExports(models: LoadedModels): { target: Export; draft?: Export } {
  const graph = models.draft?.graphs[0];
  return {
    target: { name: `${models.target.graph.digest}.onnx`, content: models.target.graph.bytes },
    ...(graph ? { draft: { name: `${graph.digest}.onnx`, content: graph.bytes } } : {}),
  };
}

/**
 * The draft's export name in every format (HF directory, GGUF file stem): its graph digest, with the layer ids for
 * an EAGLE-3 head (eagle3ExportName), the export version for a standalone draft (src/export/standalone-draft.ts),
 * and the control ids where they are not the presets' (exportStem).
 */
function draftExportStem(models: LoadedModels): string {
  const draft = models.draft!;
  const digest = draft.graphs[0].digest;
  const stem =
    draft.spec.kind === "eagle3" && draft.eagle3
      ? eagle3ExportName(digest, draft.eagle3.options.auxLayers)
      : isStandaloneDraft(draft.spec.kind)
        ? standaloneDraftName(digest)
        : digest;
  return exportStem(stem, models.spec);
}

/** llama.cpp files (src/export/gguf.ts): the target and the draft kind's standalone draft, F32. */
function ggufExports(models: LoadedModels): { target: Export; draft?: Export } {
  const files = modelGgufFiles(models, models.draft?.spec);
  return {
    target: { name: ggufFileName(exportStem(models.target.graph.digest, models.spec)), content: files.target },
    ...(files.draft && models.draft
      ? { draft: { name: ggufFileName(draftExportStem(models)), content: files.draft } }
      : {}),
  };
}

const EXPORTERS: Record<ModelFormat, (models: LoadedModels) => { target: Export; draft?: Export }> = {
  onnx: onnxExports,
  hf: hfExports,
  gguf: ggufExports,
};

export class ModelCache {
  readonly root: string;

  constructor(root: string = DEFAULT_MODEL_CACHE) {
    this.root = resolve(root);
  }

  /** Writes (once) and returns an export's absolute path. */
  private place(format: ModelFormat, item: Export): string {
    const path = join(this.root, format, item.name);
    if (existsSync(path)) return path;
    const temporary = `${path}.tmp-${process.pid}-${Date.now()}`;
    mkdirSync(dirname(path), { recursive: true });
    try {
      if (item.content instanceof Uint8Array) writeFileSync(temporary, item.content);
      else {
        for (const [name, content] of item.content) {
          mkdirSync(dirname(join(temporary, name)), { recursive: true });
          writeFileSync(join(temporary, name), content);
        }
      }
      if (existsSync(path)) rmSync(temporary, { recursive: true, force: true });
      else renameSync(temporary, path);
    } catch (error) {
      rmSync(temporary, { recursive: true, force: true });
      throw error;
    }
    return path;
  }

  /** The case's models in each format the engine loads (the formats that cannot carry its draft are left out). */
  files(testCase: Case, formats: readonly ModelFormat[]): ModelFiles {
    const models = loadModels({ ...testCase, model: { spec: resolveModelSpec(testCase.model) } });
    const files: ModelFiles = {};
    // A target-only run never loads its case's draft: it gets the target's files whatever the draft kind (an
    // engine declaring no draft kinds runs target-only cases that carry one of the generator's kinds).
    const speculative = testCase.engine.mode === "speculative";
    for (const format of formats) {
      const exporter = EXPORTERS[format];
      const kind = testCase.draft?.kind;
      const family = modelFamiliesOf(models.spec).length > 0;
      if (speculative && kind && kind !== "ngram" && !draftsOf(format, family).includes(kind)) continue;
      const exports = exporter(speculative ? models : { ...models, draft: undefined });
      files[format] = {
        target: this.place(format, exports.target),
        ...(exports.draft ? { draft: this.place(format, exports.draft) } : {}),
      };
    }
    return files;
  }
}
