// Runs one case on llama.cpp: every request is a sequence of one target context (node-llama-cpp's dispatcher
// batches the sequences' decodes together), evaluated greedily (temperature 0: llama.cpp's greedy sampler,
// argmax with ties to the lower id) until EOS or maxNewTokens. Speculative mode gives each sequence a token
// predictor: a DraftSequenceTokenPredictor over a sequence of one draft context (the standalone draft GGUF),
// asked for exactly numSteps drafts (minTokens = maxTokens = S, no confidence cut), or an
// InputLookupTokenPredictor over the request's prompt (ngram: up to S tokens). A RecordingPredictor around it
// turns what the library does into rounds (round-recorder.ts). When a request stops mid-round, the round's
// remaining validated drafts are still drawn from the library (they cost no decode) so the round's accepted
// path is known; they are not part of the output.
import {
  DraftSequenceTokenPredictor,
  InputLookupTokenPredictor,
  type LlamaContext,
  type Token,
  type TokenPredictor,
} from "node-llama-cpp";
import type { Case, CaseRequest } from "../../case/case.ts";
import { resolveModelSpec } from "../../case/models.ts";
import type { ReportedOutput } from "../../trace/outputs-line.ts";
import type { ModelPaths } from "./model-files.ts";
import { RecordingPredictor, RoundTracker, type Round } from "./round-recorder.ts";
import type { LlamaRuntime } from "./runtime.ts";

export interface RequestRun {
  request: CaseRequest;
  output: ReportedOutput;
  /** Speculative rounds in order (empty in target-only mode). */
  rounds: Round[];
}

export interface LlamaRunOptions {
  /** Called with each finished request's rounds (the engine's --log-rounds writes them to stderr). */
  onRounds?: (request: CaseRequest, rounds: readonly Round[]) => void;
}

/** node-llama-cpp brands token ids; ours are plain vocabulary indices. */
function asTokens(ids: readonly number[]): Token[] {
  return ids as Token[];
}

/** Per-sequence context length: the longest request, its drafts, and slack so no context shift can happen. */
function contextLength(testCase: Case): number {
  const steps = testCase.engine.mode === "speculative" ? testCase.engine.numSteps : 0;
  const longest = Math.max(
    ...testCase.workload.requests.map((request) => request.prompt.length + request.maxNewTokens),
  );
  return longest + steps + 8;
}

function predictorFor(testCase: Case, request: CaseRequest, draftContext: LlamaContext | undefined): TokenPredictor {
  const numSteps = testCase.engine.numSteps;
  if (testCase.draft?.kind === "ngram") {
    const lookup = new InputLookupTokenPredictor({
      patternLength: { min: 1 },
      predictionLength: { min: 1, max: numSteps },
    });
    lookup.updateInputTokens(asTokens(request.prompt));
    return lookup;
  }
  if (!draftContext) throw new Error("a model draft needs a draft context");
  return new DraftSequenceTokenPredictor(draftContext.getSequence(), {
    minTokens: numSteps,
    maxTokens: numSteps,
    minConfidence: 0, // 0 switches the confidence cut off: exactly S drafts per round unless the draft ends
  });
}

async function runRequest(
  testCase: Case,
  request: CaseRequest,
  context: LlamaContext,
  draftContext: LlamaContext | undefined,
  nextRoundIndex: () => number,
): Promise<RequestRun> {
  const eosId = resolveModelSpec(testCase.model).eosId;
  const speculative = testCase.engine.mode === "speculative";
  const predictor = speculative ? new RecordingPredictor(predictorFor(testCase, request, draftContext)) : undefined;
  const sequence = context.getSequence(predictor ? { tokenPredictor: predictor } : undefined);
  const tracker = predictor && new RoundTracker(sequence, predictor, request.prompt.length, nextRoundIndex);
  const tokens: number[] = [];
  const seen = [...request.prompt];
  let finishReason: ReportedOutput["finishReason"] = "unfinished";
  try {
    for await (const yielded of sequence.evaluate(asTokens(request.prompt), { temperature: 0, yieldEogToken: true })) {
      const token = Number(yielded);
      tracker?.onToken(token, seen);
      seen.push(token);
      if (finishReason === "unfinished") {
        tokens.push(token);
        if (token === eosId) finishReason = "eos";
        else if (tokens.length >= request.maxNewTokens) finishReason = "length";
      }
      if (finishReason !== "unfinished" && (tracker?.owedTokens() ?? 0) === 0) break;
    }
  } finally {
    sequence.dispose();
  }
  const rounds = tracker?.rounds ?? [];
  const output: ReportedOutput = { id: request.id, tokens, finishReason };
  if (speculative) {
    // The first decode holds the prompt and the first drafts: the first round emits the first output token.
    output.roundsIncludeFirstToken = true;
    output.acceptLens = rounds.map((round) => round.validated + 1);
    if (rounds.length > 0) output.firstRoundDrafts = [...rounds[0].drafts];
  }
  return { request, output, rounds };
}

export async function runOnLlama(
  runtime: LlamaRuntime,
  testCase: Case,
  paths: ModelPaths,
  options: LlamaRunOptions = {},
): Promise<RequestRun[]> {
  const requests = testCase.workload.requests;
  const length = contextLength(testCase);
  const target = await runtime.model(paths.target);
  const speculative = testCase.engine.mode === "speculative";
  const draftModel = speculative && paths.draft ? await runtime.model(paths.draft) : undefined;
  const context = await runtime.context(target, requests.length, length);
  const draftContext = draftModel && (await runtime.context(draftModel, requests.length, length));
  let roundCount = 0;
  try {
    // Settle every sequence before the contexts go away, then report the first failure.
    const settled = await Promise.allSettled(
      requests.map((request) => runRequest(testCase, request, context, draftContext, () => roundCount++)),
    );
    const failed = settled.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    const runs = settled.map((result) => (result as PromiseFulfilledResult<RequestRun>).value);
    for (const run of runs) options.onRounds?.(run.request, run.rounds);
    return runs;
  } finally {
    await draftContext?.dispose();
    await context.dispose();
  }
}
