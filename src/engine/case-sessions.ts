// A case's ONNX Runtime sessions (cached per graph and runtime options) shaped as the engine takes them:
// the target, a chain/tree draft or the multi-layer modules, EAGLE-3's auxiliary layers and d2t map.
import type { Case } from "../case/case.ts";
import type { LoadedModels } from "../case/models.ts";
import { draftToTarget } from "../model/weights.ts";
import { isStandaloneDraft } from "../model/spec.ts";
import { sessionFor } from "../runtime/sessions.ts";
import type { EngineSessions } from "./context.ts";

/** Sessions for a case's models (cached), shaped as the engine takes them. */
export async function engineSessions(testCase: Case, models: LoadedModels): Promise<EngineSessions> {
  const runtime = testCase.engine.runtime;
  const target = await sessionFor(
    models.target.graph.bytes,
    models.target.graph.digest,
    models.spec,
    runtime,
    models.target.graph.window,
    models.target.graph.recurrentInitial,
  );
  const draftGraphs = testCase.engine.mode === "speculative" ? (models.draft?.graphs ?? []) : [];
  const drafts = await Promise.all(
    draftGraphs.map((graph) =>
      sessionFor(graph.bytes, graph.digest, models.spec, runtime, graph.window, graph.recurrentInitial),
    ),
  );
  const multiLayer = testCase.engine.multiLayer === true;
  const eagle3 = testCase.engine.mode === "speculative" ? models.draft?.eagle3 : undefined;
  return {
    target,
    draft: multiLayer ? undefined : drafts[0],
    draftModules: multiLayer ? drafts : undefined,
    draftLayers: draftGraphs[0]?.layers,
    ...(draftGraphs.length > 0 && isStandaloneDraft(testCase.draft?.kind) ? { standaloneDraft: true } : {}),
    ...(eagle3
      ? { eagle3: { auxLayers: eagle3.options.auxLayers, draftToTarget: draftToTarget(eagle3.input.d2t) } }
      : {}),
  };
}
