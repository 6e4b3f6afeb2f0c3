// The reference oracle the laws consult: cache-free target and draft recomputations, memoized per
// token sequence (several laws ask about the same request).
import type { LoadedModels } from "../engine/run-case.ts";
import { sessionFor } from "../engine/run-case.ts";
import { draftLogitScale, type ModelSpec } from "../model/spec.ts";
import type { ModelSession, RuntimeOptions } from "../runtime/ort.ts";
import {
  recomputeDraftRow,
  recomputeModuleRow,
  teacherForcedTarget,
  type DraftRowReference,
  type RowPrediction,
  type TeacherForcedTarget,
} from "../reference/cache-free.ts";
import { eagle3ReadingOf, type Eagle3Reading } from "../reference/eagle3-reading.ts";
import { epsilonFor } from "./law.ts";

export class ReferenceOracle {
  private readonly targetMemo = new Map<string, Promise<TeacherForcedTarget>>();
  private readonly draftMemo = new Map<string, Promise<DraftRowReference>>();
  readonly epsilon: number;
  /** Draft ties and logit tolerances scale with the draft's logit scale (the mirror's 2^16). */
  readonly draftEpsilon: number;

  private constructor(
    readonly spec: ModelSpec,
    private readonly target: ModelSession,
    private readonly draft: ModelSession | undefined,
    private readonly modules: readonly ModelSession[],
    readonly draftLayers: number,
    runtime: RuntimeOptions,
    scale: number,
    /** EAGLE-3 drafts: what the checkpoint's config and maps say (layer ids, norm_before_fc, d2t). */
    readonly eagle3?: Eagle3Reading,
  ) {
    this.epsilon = epsilonFor(spec.dtype, runtime.ep);
    this.draftEpsilon = this.epsilon * scale;
  }

  static async create(models: LoadedModels, runtime: RuntimeOptions): Promise<ReferenceOracle> {
    const target = await sessionFor(models.target.graph.bytes, models.target.graph.digest, models.spec, runtime);
    const graphs = models.draft?.graphs ?? [];
    const sessions = await Promise.all(
      graphs.map((graph) => sessionFor(graph.bytes, graph.digest, models.spec, runtime)),
    );
    const scale = models.draft ? draftLogitScale(models.draft.spec) : 1;
    return new ReferenceOracle(
      models.spec,
      target,
      sessions[0],
      sessions,
      graphs[0]?.layers ?? 0,
      runtime,
      scale,
      eagle3ReadingOf(models.spec, models.draft),
    );
  }

  get hasDraft(): boolean {
    return this.draft !== undefined;
  }

  /** Teacher-forced target over a verified sequence (prompt + output). */
  targetOver(tokens: readonly number[]): Promise<TeacherForcedTarget> {
    const key = tokens.join(",");
    let memo = this.targetMemo.get(key);
    if (!memo) {
      memo = teacherForcedTarget(this.target, this.spec, tokens);
      this.targetMemo.set(key, memo);
    }
    return memo;
  }

  /**
   * A draft row recomputed without a cache: rooted at position L of `sequence` (x_L the bonus), at the
   * end of the draft path `pathTokens` ([] is the draft-extend row at anchor L - 1, which yields the
   * root's candidates). Memoized per path, so a tree costs one forward per node.
   */
  draftRow(
    sequence: readonly number[],
    rootPosition: number,
    pathTokens: readonly number[],
  ): Promise<DraftRowReference> {
    if (!this.draft) throw new Error("no draft model");
    const key = `${sequence.join(",")}|${rootPosition}|${pathTokens.join(",")}`;
    let memo = this.draftMemo.get(key);
    if (!memo) {
      memo = (async () => {
        // By causality the whole sequence's forward holds every prefix's hidden states: one forward per request.
        const target = await this.targetOver(sequence);
        const pathHidden = [];
        for (let depth = 0; depth < pathTokens.length; depth++)
          pathHidden.push((await this.draftRow(sequence, rootPosition, pathTokens.slice(0, depth))).hidden);
        return recomputeDraftRow(
          this.draft!,
          this.spec,
          this.draftLayers,
          target,
          rootPosition,
          pathTokens,
          pathHidden,
          this.eagle3,
        );
      })();
      this.draftMemo.set(key, memo);
    }
    return memo;
  }

  /**
   * Multi-layer: module k's row at lastAnchor recomputed without a cache, over the verified tokens up to
   * the round's root x_L followed by the round's drafts (none for a persisted extend row).
   */
  async moduleRow(
    sequence: readonly number[],
    module: number,
    lastAnchor: number,
    rootPosition: number,
    drafts: readonly number[],
  ): Promise<RowPrediction> {
    const session = this.modules[module];
    if (!session) throw new Error(`no draft module ${module}`);
    const target = await this.targetOver(sequence);
    return recomputeModuleRow(session, this.spec, this.draftLayers, target, module, lastAnchor, [
      ...sequence.slice(0, rootPosition + 1),
      ...drafts,
    ]);
  }
}
