// Workloads: requests (prompt = the preset's preamble ++ a free suffix, so shrinking keeps the
// preamble), max new tokens, arrival steps, and aborts between forwards. Everything is drawn raw and
// mapped once the preset is known: no chain, so fast-check shrinks field by field.
import fc from "fast-check";
import type { AbortEvent, CaseRequest } from "../../case/case.ts";
import type { ModelSpec } from "../../model/spec.ts";
import { promptToken } from "./model.ts";
import { requestSamplingArbitrary, samplingOf, type SamplingDraw, type SamplingSpace } from "./sampling.ts";
import { removableArray } from "./removable-array.ts";
import type { CaseSpace } from "./space.ts";

export interface RequestDraw {
  suffix: number[];
  maxNewTokens: number;
  arrivalStep: number;
  /** Leading suffix tokens copied from the first request's (a shared prefix for the prefix cache; 0 shrinks). */
  shared: number;
  sampling: SamplingDraw | null;
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
  });
  return removableArray(request, { minLength: s.requests.min, maxLength: s.requests.max });
}

// Runs of the space last a handful of steps: steps up to 4 and forwards up to 5 mostly land on live requests.
const lifecycleDraw = fc.record({
  request: fc.nat({ max: 2 }),
  step: fc.nat({ max: 4 }),
  beforeForward: fc.nat({ max: 5 }),
});

export function abortsArbitrary(s: CaseSpace): fc.Arbitrary<AbortDraw[]> {
  return fc.array(lifecycleDraw, { minLength: s.minAborts ?? 0, maxLength: s.maxAborts });
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

export function requestsOf(spec: ModelSpec, draws: readonly RequestDraw[], sampling: SamplingSpace): CaseRequest[] {
  return draws.map((draw, id) => {
    const params = samplingOf(spec, draw.sampling, draw.maxNewTokens, sampling);
    return {
      id,
      prompt: [...spec.preamble, ...suffixOf(spec, draws, id)],
      maxNewTokens: draw.maxNewTokens,
      arrivalStep: draw.arrivalStep,
      ...(params ? { sampling: params } : {}),
    };
  });
}

export function abortsOf(draws: readonly AbortDraw[], numRequests: number): AbortEvent[] {
  return draws.map((draw) => ({
    request: draw.request % numRequests,
    step: draw.step,
    beforeForward: draw.beforeForward,
  }));
}
