// Where the engine finds a case's GGUF files. Protocol v2 requests name them (models.files.gguf); until
// specconf's content-addressed model cache sends them, `--models DIR` names them by the ONNX digests the
// request carries (DIR/<digest>.v<export version>.gguf; a standalone draft's DIR/<digest>.draft<draft
// version>.v<export version>.gguf), and `--write-missing` writes absent ones from the case's spec with
// the GGUF exporter. writeCaseGguf is that writer, shared with the tests.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AdapterRequest } from "../protocol.ts";
import type { Case } from "../../case/case.ts";
import { loadModels, resolveModelSpec } from "../../case/models.ts";
import { exportStem } from "../../export/export-name.ts";
import type { ModelSpec } from "../../model/spec.ts";
import { ggufFileName, ggufFiles } from "../../export/gguf.ts";
import { standaloneDraftName } from "../../export/standalone-draft.ts";
import { writeTextAtomic } from "../../schema/atomic-write.ts";

export interface ModelPaths {
  target: string;
  /** The standalone draft; absent for target-only runs and ngram. */
  draft?: string;
}

export interface ModelDirOptions {
  /** Directory of <onnx digest>.v<export version>.gguf files. */
  modelsDir?: string;
  /** Write absent files from the case's spec. */
  writeMissing?: boolean;
}

/** A request the engine must answer with an error (not unsupported: the case itself is fine). */
export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelFileError";
  }
}

/**
 * A standalone draft's file name: <onnx digest>.draft<draft version>.v<export version>.gguf (the draft version
 * says its LM head carries the mirror's logit scale: src/export/standalone-draft.ts).
 */
function draftFileName(digest: string, spec: ModelSpec): string {
  return ggufFileName(exportStem(standaloneDraftName(digest), spec));
}

/** Whether the run loads a draft model (speculative with a model draft). */
export function needsDraftModel(testCase: Case): boolean {
  return testCase.engine.mode === "speculative" && testCase.draft !== null && testCase.draft.kind !== "ngram";
}

/**
 * Writes the GGUF target and standalone draft of `testCase` under `dir` as <onnx digest>.v<export version>.gguf (ggufFileName) (skipping files
 * that exist: the digest names the content) and returns their paths and the exporter's notes.
 */
export function writeCaseGguf(testCase: Case, dir: string): ModelPaths & { notes: string[] } {
  const models = loadModels(testCase);
  const target = join(dir, ggufFileName(exportStem(models.target.graph.digest, models.spec)));
  const wantDraft = needsDraftModel(testCase);
  const draft =
    wantDraft && models.draft ? join(dir, draftFileName(models.draft.graphs[0].digest, models.spec)) : undefined;
  let notes: string[] = [];
  if (!existsSync(target) || (draft && !existsSync(draft))) {
    const files = ggufFiles(models, wantDraft ? testCase.draft : null);
    notes = files.notes;
    if (!existsSync(target)) writeTextAtomic(target, files.target);
    if (draft && !existsSync(draft)) {
      if (!files.draft)
        throw new ModelFileError(`no standalone draft for ${testCase.draft?.kind}: ${notes.join("; ")}`);
      writeTextAtomic(draft, files.draft);
    }
  }
  return { target, draft, notes };
}

/** The GGUF paths for a request: the ones it names, else DIR/<digest>.v<export version>.gguf (written first if asked). */
export function modelPaths(request: AdapterRequest, options: ModelDirOptions): ModelPaths {
  const testCase = request.case;
  const wantDraft = needsDraftModel(testCase);
  const named = request.models.files?.gguf;
  if (named) {
    if (wantDraft && !named.draft)
      throw new ModelFileError("/models/files/gguf/draft: the case runs a draft model and no draft file is named");
    return { target: named.target, draft: wantDraft ? named.draft : undefined };
  }
  // The files carry the spec's BOS and EOS, which the digests do not (export/export-name.ts).
  const spec = resolveModelSpec(testCase.model);
  if (!options.modelsDir)
    throw new ModelFileError("/models/files/gguf: the request names no GGUF files and the engine has no --models DIR");
  if (wantDraft && request.models.draft === null)
    throw new ModelFileError("/models/draft: the case runs a draft model and the request carries no draft digest");
  const paths: ModelPaths = {
    target: join(options.modelsDir, ggufFileName(exportStem(request.models.target, spec))),
    draft: wantDraft ? join(options.modelsDir, draftFileName(request.models.draft!, spec)) : undefined,
  };
  const missing = [paths.target, paths.draft].filter((path): path is string => !!path && !existsSync(path));
  if (missing.length === 0) return paths;
  if (!options.writeMissing)
    throw new ModelFileError(`missing ${missing.join(", ")} (start the engine with --write-missing to export them)`);
  const written = writeCaseGguf(testCase, options.modelsDir);
  if (written.target !== paths.target || written.draft !== paths.draft)
    throw new ModelFileError("/models: the request's digests do not match the models its case spec builds");
  return paths;
}
