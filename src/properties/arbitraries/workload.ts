// Workloads: requests (prompt = the preset's preamble ++ a free suffix, so shrinking keeps the
// preamble), max new tokens, arrival steps, and aborts between forwards. Everything is drawn raw and
// mapped once the preset is known: no chain, so fast-check shrinks field by field.
import fc from "fast-check";
import type { AbortEvent, CaseRequest } from "../../case/case.ts";
import type { ModelSpec } from "../../model/spec.ts";
import type { SamplingParams } from "../../sampling/params.ts";
import { promptToken } from "./model.ts";
import { requestSamplingArbitrary, samplingOf, type SamplingDraw, type SamplingSpace } from "./sampling.ts";
import { removableArray } from "./removable-array.ts";
import { grammarDrawArbitrary, grammarOf, type GrammarDraw } from "./grammar.ts";
import type { CaseSpace } from "./space.ts";
import { textDraws, textParamsOf, type TextDraw } from "./text.ts";

export interface RequestDraw {
  suffix: number[];
  maxNewTokens: number;
  arrivalStep: number;
  /** Leading suffix tokens copied from the first request's (a shared prefix for the prefix cache; 0 shrinks). */
  shared: number;
  sampling: SamplingDraw | null;
  /** Spaces with grammars only (absent elsewhere, so their draws stay as they were): null shrinks it away. */
  grammar?: GrammarDraw | null;
  /** Spaces with speculation schedules only: raw draft steps per round (0 and 1: off; else capped at numSteps). */
  schedule?: number[] | null;
  /** Spaces at the context boundary only: how far below the context the request's prompt + output ends (raw). */
  contextGap?: number;
  /** Spaces with the text layer only: the request's stop strings (null: not detokenized, the shrink target). */
  text?: TextDraw | null;
}

export interface AbortDraw {
  /** Index into the requests (mod their count). */
  request: number;
  step: number;
  beforeForward: number;
}

export function requestsArbitrary(s: CaseSpace): fc.Arbitrary<RequestDraw[]> {
  const request = fc.record({
    suffix: fc.array(fc.nat({ max: 4095 }), { minLength: s.suffix.min, maxLength: s.suffix.max }),
    maxNewTokens: fc.integer(s.maxNewTokens),
    arrivalStep: fc.nat({ max: s.maxArrival }),
    shared: fc.nat({ max: s.maxShared }),
    sampling: requestSamplingArbitrary(s.sampling),
    // Only a space with grammars draws one: adding a key to the record changes every other space's draws.
    ...(s.grammar ? { grammar: fc.option(grammarDrawArbitrary, { nil: null, freq: 5 }) } : {}),
    ...(s.draftSchedule
      ? { schedule: fc.option(fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 6 }), { nil: null, freq: 5 }) }
      : {}),
    ...(s.contextBoundary ? { contextGap: fc.nat({ max: 7 }) } : {}),
    ...(s.text ? { text: fc.option(textDraws(s.overlappingStops === true), { nil: null, freq: 6 }) } : {}),
  });
  // A request one index lower keeps its prompt: suffixOf offsets its own raw tokens by the index.
  return removableArray(
    request,
    { minLength: s.requests.min, maxLength: s.requests.max, shrinkTo: s.requests.shrinkTo },
    (draw) => ({ ...draw, suffix: draw.suffix.map((raw) => raw + 1) }),
  );
}

// Runs of the space last a handful of steps: steps up to 4 and forwards up to 5 mostly land on live requests.
const lifecycleDraw = fc.record({
  request: fc.nat({ max: 2 }),
  step: fc.nat({ max: 4 }),
  beforeForward: fc.nat({ max: 5 }),
});

export function abortsArbitrary(s: CaseSpace): fc.Arbitrary<AbortDraw[]> {
  const draw = s.abortSteps
    ? fc.record({ request: fc.nat({ max: 2 }), step: fc.integer(s.abortSteps), beforeForward: fc.nat({ max: 5 }) })
    : lifecycleDraw;
  return fc.array(draw, { minLength: s.minAborts ?? 0, maxLength: s.maxAborts });
}

/** Retracts draw like aborts: a request index, a step and the forward they come before. */
export function retractsArbitrary(s: CaseSpace): fc.Arbitrary<AbortDraw[]> {
  return fc.array(lifecycleDraw, { minLength: s.retracts.min, maxLength: s.retracts.max });
}

/**
 * A request's prompt suffix (raw draws mapped into the vocabulary): its first `shared` tokens are the first
 * request's (as far as both reach), the rest its own draw offset by its index (shrunk requests of a batch
 * still differ: request i's smallest token is 3 + i, since identical neighbours hide cross-request bugs such
 * as a stride reading the neighbour's row). Prompt lengths do not change with sharing, and shrinking `shared`
 * to 0 undoes it.
 */
export function suffixOf(spec: ModelSpec, draws: readonly RequestDraw[], index: number): number[] {
  const own = draws[index].suffix;
  const copied = index === 0 ? [] : draws[0].suffix.slice(0, Math.min(draws[index].shared, own.length));
  return [
    ...copied.map((raw) => promptToken(spec, raw)),
    ...own.slice(copied.length).map((raw) => promptToken(spec, raw + index)),
  ];
}

/** Each request `copies` times in a row (ids renumbered), the copies' sampling seeds distinct. */
export function replicate(requests: readonly CaseRequest[], copies: number): CaseRequest[] {
  if (copies <= 1) return [...requests];
  return requests.flatMap((request, r) =>
    Array.from({ length: copies }, (_, copy) => ({
      ...request,
      id: r * copies + copy,
      ...(request.sampling
        ? { sampling: { ...request.sampling, seed: ((request.sampling.seed ?? r) * 7919 + copy) % 2 ** 31 } }
        : {}),
    })),
  );
}

/** A raw schedule draw as draft steps: 0 and 1 switch speculation off (a third of the rounds), else raw - 1 capped at S. */
export function scheduleOf(raw: readonly number[], numSteps: number): number[] {
  return raw.map((value) => (value <= 1 ? 0 : Math.min(value - 1, numSteps)));
}

export function requestsOf(
  spec: ModelSpec,
  draws: readonly RequestDraw[],
  sampling: SamplingSpace,
  numSteps = 1,
): CaseRequest[] {
  return draws.map((draw, id) => {
    const drawn = samplingOf(spec, draw.sampling, draw.maxNewTokens, sampling);
    const constrained =
      draw.grammar && sampling.options.includes("grammar")
        ? { ...withoutGrammarConflicts(drawn), grammar: grammarOf(spec, draw.grammar) }
        : drawn;
    const params =
      draw.text && sampling.options.includes("stop")
        ? { ...constrained, ...textParamsOf(spec, draw.text, sampling.options) }
        : constrained;
    return {
      id,
      prompt: [...spec.preamble, ...suffixOf(spec, draws, id)],
      maxNewTokens: draw.maxNewTokens,
      arrivalStep: draw.arrivalStep,
      ...(params ? { sampling: params } : {}),
      ...(draw.schedule ? { draftSchedule: scheduleOf(draw.schedule, numSteps) } : {}),
    };
  });
}

/**
 * A request with a grammar keeps the drawn options a grammar combines with: greedy (the reference engine
 * masks greedy requests only), and neither min tokens nor stop ids, which could mask every token a state
 * allows.
 */
function withoutGrammarConflicts(params: SamplingParams | undefined): SamplingParams {
  if (!params) return {};
  const { temperature, topK, topP, minP, seed, minNewTokens, stopTokenIds, ...kept } = params;
  void [temperature, topK, topP, minP, seed, minNewTokens, stopTokenIds];
  return kept;
}

export function abortsOf(draws: readonly AbortDraw[], numRequests: number): AbortEvent[] {
  return draws.map((draw) => ({
    request: draw.request % numRequests,
    step: draw.step,
    beforeForward: draw.beforeForward,
  }));
}
