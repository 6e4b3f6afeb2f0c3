// Greedy sampling of one target row for a request with sampling options: the processed logits
// (src/sampling/process-logits.ts) in the row's context, their argmax and margin (what greedy verification
// compares drafts with), and the processed row kept when the request asks for logprobs or samples
// (stochastic-sampler.ts draws from it).
import { changesLogits, isStochastic, type LogprobEntry, type SamplingParams } from "../sampling/params.ts";
import {
  choose,
  logprobEntry,
  processLogits,
  rowAt,
  type ProcessingContext,
  type RowChoice,
} from "../sampling/process-logits.ts";

export interface RowSampler {
  params: SamplingParams;
  context: ProcessingContext;
  eosId: number;
  /** false: the row's logits stay raw (the processing-bonus-only fault's verified positions). */
  process: boolean;
}

export interface SampledRow extends RowChoice {
  /** The logits were processed (the options can change the argmax and the row was processed). */
  processed: boolean;
  /** The row the choice was made on, kept for logprobs and for stochastic draws. */
  row?: Float64Array;
  /** The sampler processed this row (false: the processing-bonus-only fault; min-p is then skipped too). */
  processing: boolean;
}

/** The greedy choice of row `row` of a [rows, vocab] logits tensor. Pure. */
export function sampleRow(sampler: RowSampler, logits: ArrayLike<number>, row: number, vocab: number): SampledRow {
  const processed = sampler.process && changesLogits(sampler.params);
  const values = processed
    ? processLogits(logits, row * vocab, vocab, sampler.params, sampler.context, sampler.eosId)
    : rowAt(logits, row * vocab, vocab);
  return {
    ...choose(values),
    processed,
    processing: sampler.process,
    ...(sampler.params.logprobs !== undefined || isStochastic(sampler.params) ? { row: values } : {}),
  };
}

/** The logprob entry of `token` emitted from a sampled row (undefined when the request asked for none). */
export function logprobOf(
  sampled: SampledRow | undefined,
  token: number,
  params: SamplingParams,
): LogprobEntry | undefined {
  if (params.logprobs === undefined || !sampled?.row) return undefined;
  return logprobEntry(sampled.row, token, params.logprobs);
}
