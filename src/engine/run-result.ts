// What a finished run hands back, read off the stepped engine: the outputs per request, the trace (requests,
// events, lifecycle, the runtime it ran on) and what only the reference engine records (pool checks, slots
// still held, steps, prefix hits). Split out of run-case.ts (issue 24) so that file is the run loop alone.
import type { Case } from "../case/case.ts";
import type { LoadedModels } from "../case/models.ts";
import { runtimeInfo } from "../runtime/ort.ts";
import { TRACE_FORMAT_VERSION, type Trace } from "../trace/schema.ts";
import { mapPacked, traceRequest } from "../trace/records.ts";
import type { RequestOutput, RunResult } from "../trace/run-result.ts";
import type { Engine } from "./step-loop.ts";
import type { TextStream } from "./text-stream.ts";

/** A detokenized request's text, stop string, deltas and usage. */
function textOutputs(text: TextStream, promptTokens: number, aborted: boolean) {
  return {
    text: text.output,
    ...(text.occurrence ? { stopString: text.occurrence.stop } : {}),
    deltas: text.finalDeltas(aborted),
    usage: { promptTokens, completionTokens: text.completionTokens },
  };
}

/** The run result of an engine that has run the case to its end (engine.finish() called). */
export function runResult(
  testCase: Case,
  engine: Engine,
  models: LoadedModels,
  draftGraphs: readonly { digest: string }[],
): RunResult {
  const outputs: RequestOutput[] = testCase.workload.requests.map(({ id }) => {
    const request = engine.requests.get(id)!;
    const finished = request.finishReason !== undefined && request.finishReason !== "abort";
    return {
      id,
      tokens: [...request.output],
      finishReason: request.finishReason ?? "unfinished",
      ...(request.stopTokenId !== undefined ? { stopTokenId: request.stopTokenId } : {}),
      ...(finished ? { finishedLength: request.output.length } : {}),
      ...(request.sampling.logprobs !== undefined ? { logprobs: [...request.logprobs] } : {}),
      ...(request.text ? textOutputs(request.text, request.prompt.length, request.finishReason === "abort") : {}),
      acceptLens: [...request.acceptLens],
      cutRounds: request.cutRounds,
    };
  });
  const pools = engine.context.pools;
  const slotsInUseAtEnd = [pools.target, ...engine.context.draftPools()].reduce(
    (sum, pool) => sum + pool.numUsedSlots(),
    0,
  );
  const info = runtimeInfo(testCase.engine.runtime);
  const trace: Trace = {
    formatVersion: TRACE_FORMAT_VERSION,
    engine: { name: "specconf-reference", version: "0.1.0", ...info, dtype: models.spec.dtype },
    models: {
      target: models.target.graph.digest,
      draft: draftGraphs.length > 0 ? draftGraphs.map((graph) => graph.digest) : undefined,
    },
    config: { ...testCase.engine, draft: testCase.draft },
    requests: mapPacked(outputs, (output) =>
      traceRequest({
        id: output.id,
        prompt: [...engine.requests.get(output.id)!.prompt],
        output: output.tokens,
        finishReason: output.finishReason,
        stopTokenId: output.stopTokenId,
        finishedLength: output.finishedLength,
        logprobs: output.logprobs,
        // Only with request slots: without them every request has a fresh one of its own.
        text: output.text,
        stopString: output.stopString,
        deltas: output.deltas,
        usage: output.usage,
        slot: testCase.engine.requestSlots !== undefined ? engine.requests.get(output.id)!.slot : undefined,
      }),
    ),
    events: engine.context.recorder.events,
    // Absent fields stay undefined rather than left out: one shape for every trace (trace/records.ts).
    lifecycle: engine.context.recorder.lifecycle.length > 0 ? engine.context.recorder.lifecycle : undefined,
  };
  const prefixHits = engine.context.prefixHits;
  return {
    outputs,
    trace,
    internals: {
      poolChecks: engine.poolChecks,
      slotsInUseAtEnd,
      steps: engine.step,
      ...(prefixHits.length > 0 ? { prefixHits } : {}),
    },
  };
}
