// What a case's JSON schema cannot check: consistency between the engine config, the model and the workload
// (draft kind against mode, multi-layer preambles, request ids, vocabulary, the context boundary, pool size). Every
// command runs it through preflight before building anything. (Split out of engine/run-case.ts, issue 24.)
import type { Case } from "./case.ts";
import { checkCaseBounds, checkPoolSize } from "./limits.ts";
import { ConfigError, validateEngineConfig } from "./engine-config.ts";
import { isEagle3, isHead, type ModelSpec } from "../model/spec.ts";
import { checkSampling } from "./sampling-checks.ts";
import { checkDraftSchedule } from "./draft-schedule.ts";
import { checkContextLimits } from "./context-limit.ts";

/** Checks what the schema cannot: consistency between config, model and workload. Throws ConfigError. */
export function checkCaseConsistency(testCase: Case, spec: ModelSpec): void {
  checkCaseBounds(testCase, spec);
  validateEngineConfig(testCase.engine);
  if (testCase.engine.mode === "speculative" && !testCase.draft)
    throw new ConfigError("/draft", "speculative mode needs a draft model");
  const ids = new Set<number>();
  const multiLayer = testCase.engine.mode === "speculative" && testCase.engine.multiLayer === true;
  if (testCase.engine.mode === "speculative" && testCase.draft?.kind === "ngram") {
    if (testCase.engine.topk !== 1)
      throw new ConfigError("/engine/topk", "ngram (prompt lookup) drafting proposes chains: topk must be 1");
    if (multiLayer) throw new ConfigError("/engine/multiLayer", "ngram (prompt lookup) drafting has no draft modules");
  }
  if (multiLayer) {
    if (testCase.engine.topk !== 1) throw new ConfigError("/engine/topk", "multi-layer drafting needs topk 1");
    if (testCase.draft?.kind === "eagle" || isEagle3(testCase.draft?.kind))
      throw new ConfigError(
        "/draft/kind",
        `multi-layer drafting needs a mirror-family draft (modules), not ${testCase.draft?.kind}`,
      );
    if (spec.preamble.length < testCase.engine.numSteps) {
      throw new ConfigError(
        "/engine/numSteps",
        `multi-layer drafting with ${testCase.engine.numSteps} modules needs a preamble of ${testCase.engine.numSteps} tokens; the model's has ${spec.preamble.length}`,
      );
    }
  }
  if (spec.recurrent) checkHybrid(testCase);
  testCase.workload.requests.forEach((request, i) => {
    if (ids.has(request.id)) throw new ConfigError(`/workload/requests/${i}/id`, `duplicate request id ${request.id}`);
    ids.add(request.id);
    request.prompt.forEach((token, t) => {
      if (token >= spec.vocab)
        throw new ConfigError(
          `/workload/requests/${i}/prompt/${t}`,
          `token ${token} is outside the vocabulary (${spec.vocab})`,
        );
    });
    if (multiLayer) {
      const preamble = spec.preamble.slice(0, testCase.engine.numSteps);
      const at = preamble.findIndex((token, t) => request.prompt[t] !== token);
      if (at >= 0)
        throw new ConfigError(
          `/workload/requests/${i}/prompt/${at}`,
          `multi-layer mirror modules need prompts starting with the preamble [${preamble.join(", ")}]`,
        );
    }
    const mirror = testCase.draft && !isHead(testCase.draft.kind) && testCase.draft.kind !== "ngram";
    if (mirror && testCase.engine.mode === "speculative" && request.prompt[0] !== spec.bosId) {
      throw new ConfigError(
        `/workload/requests/${i}/prompt/0`,
        `mirror drafts need prompts starting with BOS (${spec.bosId})`,
      );
    }
    checkSampling(request, `/workload/requests/${i}`, spec);
    checkDraftSchedule(request, `/workload/requests/${i}`, testCase.engine);
  });
  checkContextLimits(testCase, spec);
  testCase.workload.aborts.forEach((abort, i) => {
    if (!ids.has(abort.request))
      throw new ConfigError(`/workload/aborts/${i}/request`, `no request with id ${abort.request}`);
  });
  (testCase.workload.retracts ?? []).forEach((retract, i) => {
    if (!ids.has(retract.request))
      throw new ConfigError(`/workload/retracts/${i}/request`, `no request with id ${retract.request}`);
  });
  checkPoolSize(testCase);
}

/**
 * Hybrid models (recurrent layers, model/mamba2.ts): what the reference engine does not run with recurrent state
 * (engine/recurrent-states.ts), refused by field rather than run wrong.
 */
function checkHybrid(testCase: Case): void {
  const engine = testCase.engine;
  if (engine.graphReplay)
    throw new ConfigError("/engine/graphReplay", "hybrid models: graph replay does not carry recurrent state");
  if (engine.mode !== "speculative") return;
  if (engine.multiLayer)
    throw new ConfigError("/engine/multiLayer", "hybrid models: multi-layer drafting is not supported");
  if (testCase.draft?.kind === "eagle3-mirror")
    throw new ConfigError("/draft/kind", "hybrid models: the EAGLE-3 mirror is not built with recurrent state");
}
