// Computing a golden suite: run each case on the reference engine (target-only and speculative), check
// every law, and record the target greedy tokens with the cache-free teacher-forced reference's margins,
// the speculative rounds (accept lengths and chain drafts with the cache-free draft's margins).
// Refuses to produce a golden file from a run where a law fails or a tie makes the expectation ambiguous.
import { CASE_FORMAT_VERSION, type Case } from "../case/case.ts";
import { BadInputError } from "../errors/bad-input.ts";
import { generatePrompts } from "../case/default-case.ts";
import { defaultEngineConfig } from "../case/engine-config.ts";
import { loadModels } from "../case/models.ts";
import type { RunResult } from "../trace/run-result.ts";
import { checkLaws } from "../check/runner.ts";
import { referenceSource } from "../sources/reference.ts";
import { ReferenceOracle } from "../reference/oracle.ts";
import { readRounds } from "../laws/rounds.ts";
import { getPreset } from "../model/presets.ts";
import { defaultDraftSpec, draftLogitScale } from "../model/spec.ts";
import { DEFAULT_RUNTIME, runtimeInfo } from "../runtime/ort.ts";
import type { ProcessedTarget } from "../reference/processed.ts";
import { requestSampling, type RequestSampling } from "../sampling/params.ts";
import { logprobEntry } from "../sampling/process-logits.ts";
import {
  GOLDEN_FORMAT_VERSION,
  type Golden,
  type GoldenCase,
  type GoldenLogprob,
  type GoldenRequest,
  type GoldenRound,
} from "./schema.ts";
import type { GoldenCaseDefinition, GoldenSuiteDefinition } from "./suites.ts";

export const GENERATOR = "specconf 0.1.0";

/** A suite the reference engine cannot turn into a golden file (a law fails, a tie): exit 2, nothing written. */
export class GoldenGenerationError extends BadInputError {
  constructor(message: string) {
    super(message);
    this.name = "GoldenGenerationError";
  }
}

export function goldenCaseInput(suite: GoldenSuiteDefinition, definition: GoldenCaseDefinition): Case {
  const spec = getPreset(suite.preset, suite.dtype);
  const prompts = generatePrompts(suite.preset, definition.seed, definition.requests, definition.maxNewTokens);
  const requests = prompts.map((request, i) => {
    const sampling = definition.sampling?.[i];
    return {
      ...request,
      ...(definition.arriveTogether ? { arrivalStep: 0 } : {}),
      ...(sampling ? { sampling: structuredClone(sampling) } : {}),
    };
  });
  return {
    formatVersion: CASE_FORMAT_VERSION,
    model: { spec: { ...spec, preamble: [...spec.preamble] } },
    draft: defaultDraftSpec(suite.draft, 1, suite.draftOptions),
    engine: defaultEngineConfig({
      ...definition.engine,
      mode: "speculative",
      faults: [],
      runtime: { ...DEFAULT_RUNTIME },
    }),
    workload: { requests, aborts: [] },
  };
}

async function expectedRequests(
  testCase: Case,
  targetOnly: RunResult,
  speculative: RunResult,
  oracle: ReferenceOracle,
  where: string,
): Promise<GoldenRequest[]> {
  const rounds = readRounds(speculative.trace);
  const chain = testCase.engine.topk === 1;
  const requests: GoldenRequest[] = [];
  for (const request of testCase.workload.requests) {
    const target = targetOnly.outputs.find((output) => output.id === request.id)!;
    const spec = speculative.outputs.find((output) => output.id === request.id)!;
    if (target.finishReason !== "length" && target.finishReason !== "eos" && target.finishReason !== "stop")
      throw new GoldenGenerationError(`${where}: request ${request.id} ended '${target.finishReason}'`);
    if (spec.tokens.join(",") !== target.tokens.join(",")) {
      throw new GoldenGenerationError(
        `${where}: request ${request.id}: speculative and target-only outputs differ (a tie): choose another seed`,
      );
    }
    const sequence = [...request.prompt, ...target.tokens];
    const sampling = requestSampling(testCase, request.id);
    const reference = await oracle.targetOver(sequence, sampling);
    const margins = target.tokens.map((_, i) => reference.predictions[request.prompt.length - 1 + i].margin);
    const goldenRounds: GoldenRound[] = [];
    if (chain) {
      for (const round of rounds.filter((candidate) => candidate.request === request.id)) {
        const rootPosition = round.verifyRows[0].position;
        const drafts = round.verifyRows.slice(1).map((row) => row.token);
        const draftMargins: number[] = [];
        for (let j = 0; j < drafts.length; j++) {
          const expected = (await oracle.draftRow(sequence, rootPosition, drafts.slice(0, j))).prediction;
          if (expected.argmax !== drafts[j])
            throw new GoldenGenerationError(
              `${where}: request ${request.id}, round at position ${rootPosition}: draft ${j + 1} is a tie: choose another seed`,
            );
          draftMargins.push(expected.margin);
        }
        goldenRounds.push({ acceptLen: round.result.acceptLen, drafts, draftMargins });
      }
      const lens = goldenRounds.map((round) => round.acceptLen).join(",");
      if (lens !== spec.acceptLens.join(","))
        throw new GoldenGenerationError(
          `${where}: request ${request.id}: trace rounds (${lens}) differ from the output's accept lengths (${spec.acceptLens.join(",")})`,
        );
    }
    requests.push({
      id: request.id,
      tokens: target.tokens,
      margins,
      finishReason: target.finishReason,
      ...(target.stopTokenId !== undefined ? { stopTokenId: target.stopTokenId } : {}),
      ...(sampling && sampling.params.logprobs !== undefined
        ? { logprobs: goldenLogprobs(await oracle.processedOver(sequence, sampling), target.tokens, sampling) }
        : {}),
      rounds: goldenRounds,
    });
  }
  return requests;
}

/** Each output token's rescored logprob, its top alternatives and the best logprob outside them. */
function goldenLogprobs(
  reference: ProcessedTarget,
  tokens: readonly number[],
  sampling: RequestSampling,
): GoldenLogprob[] {
  const k = sampling.params.logprobs ?? 0;
  return tokens.map((token, index) => {
    const row = reference.rows[sampling.promptLength - 1 + index]!;
    const entry = logprobEntry(row, token, k + 1);
    const top = entry.top.slice(0, k);
    return { logprob: entry.logprob, top, next: entry.top[k]?.logprob ?? null };
  });
}

export async function generateGolden(suite: GoldenSuiteDefinition): Promise<Golden> {
  const cases: GoldenCase[] = [];
  const first = goldenCaseInput(suite, suite.cases[0]);
  const models = loadModels(first);
  const oracle = await ReferenceOracle.create(models, first.engine.runtime);
  const prompts = new Set<string>();
  for (const definition of suite.cases) {
    const where = `${suite.suite}/${definition.name}`;
    const testCase = goldenCaseInput(suite, definition);
    const workload = JSON.stringify(testCase.workload.requests.map((request) => [request.id, request.prompt]));
    if (prompts.has(workload))
      throw new GoldenGenerationError(
        `${where}: same workload as another case of the suite (traces are matched to cases by workload)`,
      );
    prompts.add(workload);
    const check = await checkLaws(referenceSource(), testCase);
    if (check.crash || !check.run || !check.baseline)
      throw new GoldenGenerationError(`${where}: the reference engine did not run: ${check.crash ?? check.skipped}`);
    const speculative = check.run;
    const targetOnly = check.baseline;
    const laws = check.results;
    const failing = laws.filter((law) => law.status === "fails");
    if (failing.length > 0)
      throw new GoldenGenerationError(
        `${where}: the reference engine fails ${failing.map((law) => `${law.law} (${law.violation?.message})`).join("; ")}`,
      );
    const tied = laws.filter((law) => law.ties > 0);
    if (tied.length > 0)
      throw new GoldenGenerationError(
        `${where}: ties in ${tied.map((law) => law.law).join(", ")}: choose another seed`,
      );
    cases.push({
      name: definition.name,
      description: definition.description,
      case: testCase,
      expected: { requests: await expectedRequests(testCase, targetOnly, speculative, oracle, where) },
    });
  }
  const spec = models.spec;
  const margins = cases
    .flatMap((goldenCase) => goldenCase.expected.requests.flatMap((request) => request.margins))
    .sort((a, b) => a - b);
  const roundsAll = cases.flatMap((goldenCase) => goldenCase.expected.requests.flatMap((request) => request.rounds));
  const info = runtimeInfo(first.engine.runtime);
  const draft = models.draft;
  return {
    formatVersion: GOLDEN_FORMAT_VERSION,
    suite: suite.suite,
    description: suite.description,
    metadata: {
      generator: GENERATOR,
      ortVersion: info.ortVersion,
      ep: info.ep,
      dtype: spec.dtype,
      threads: info.threads,
      graphOptimizationLevel: info.graphOptimizationLevel,
    },
    epsilon: { target: oracle.epsilon, draft: oracle.draftEpsilon },
    models: {
      target: { preset: suite.preset, spec, digest: models.target.graph.digest },
      draft: draft
        ? { spec: draft.spec, digest: draft.graphs[0].digest, logitScale: draftLogitScale(draft.spec) }
        : null,
    },
    stats: {
      tokens: margins.length,
      minMargin: margins[0] ?? 0,
      medianMargin: margins[Math.floor(margins.length / 2)] ?? 0,
      ties: 0,
      meanAcceptLen: roundsAll.length
        ? roundsAll.reduce((sum, round) => sum + round.acceptLen, 0) / roundsAll.length
        : 0,
    },
    cases,
  };
}
