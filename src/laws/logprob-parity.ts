// Law "logprob parity": a request asking for logprobs gets one entry per output token, for that token,
// whose logprob equals the cache-free rescore (the log-softmax of the processed logits after the tokens
// before it, teacher-forced on the engine's tokens) within the dtype/EP tolerance, with the requested
// number of top alternatives, each within tolerance of its rescore and the set equal to the rescore's
// top-k up to ties (an alternative outside the reference top-k is a tie when its reference logprob is
// within epsilon of the k-th best). vLLM issue 34497 / PR 31082 and llama.cpp issue 27972: speculated
// tokens' logprobs reported as 0.0 or shifted by a position. Checked on the run and its baseline.
import type { Case } from "../case/case.ts";
import type { RequestOutput } from "../trace/run-result.ts";
import { requestSampling, type LogprobEntry } from "../sampling/params.ts";
import { logSumExp, topTokens } from "../sampling/process-logits.ts";
import type { Law } from "./definition.ts";
import { combine, LawTally, type LawResult, type LawViolation } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";

export const LOGPROB_PARITY = "logprob parity";

/** Judges one entry against the reference row; a violation (without request) or a tie count. Pure. */
export function judgeEntry(
  entry: LogprobEntry,
  token: number,
  row: ArrayLike<number>,
  k: number,
  tolerance: number,
): { violation?: Omit<LawViolation, "request">; tie: boolean } {
  if (entry.token !== token)
    return {
      violation: { message: `the entry is for token ${entry.token}`, expected: token, got: entry.token },
      tie: false,
    };
  const normalizer = logSumExp(row);
  const reference = (id: number) => row[id] - normalizer;
  const off = (value: number, id: number) => !(Math.abs(value - reference(id)) <= tolerance);
  if (off(entry.logprob, token))
    return {
      violation: {
        message: `logprob ${entry.logprob} of token ${token}, the rescore gives ${reference(token)}`,
        got: token,
      },
      tie: false,
    };
  const best = topTokens(row, k).filter((id) => row[id] > -Infinity);
  if (entry.top.length !== best.length)
    return { violation: { message: `${entry.top.length} top alternatives, ${best.length} expected` }, tie: false };
  const boundary = best.length > 0 ? reference(best[best.length - 1]) : -Infinity;
  const seen = new Set<number>();
  let tie = false;
  for (const alternative of entry.top) {
    const id = alternative.token;
    if (seen.has(id) || !(id >= 0 && id < row.length))
      return { violation: { message: `top alternative ${id} is repeated or outside the vocabulary`, got: id }, tie };
    seen.add(id);
    if (off(alternative.logprob, id))
      return {
        violation: {
          message: `top alternative ${id} has logprob ${alternative.logprob}, the rescore gives ${reference(id)}`,
          got: id,
        },
        tie,
      };
    if (!best.includes(id)) {
      if (boundary - reference(id) >= tolerance)
        return {
          violation: {
            message: `top alternative ${id} (rescore ${reference(id)}) is not among the rescore's ${k} best (the k-th is ${boundary})`,
            got: id,
          },
          tie,
        };
      tie = true;
    }
  }
  return { tie };
}

export async function checkLogprobs(
  testCase: Readonly<Case>,
  outputs: readonly Readonly<RequestOutput>[],
  oracle: ReferenceOracle,
): Promise<LawResult> {
  const tally = new LawTally(LOGPROB_PARITY);
  for (const output of outputs) {
    const sampling = requestSampling(testCase, output.id);
    const k = sampling?.params.logprobs;
    if (!sampling || k === undefined) continue;
    const entries = output.logprobs;
    if (!entries || entries.length !== output.tokens.length) {
      tally.fail({
        message: `request ${output.id}: ${entries?.length ?? "no"} logprob entries for ${output.tokens.length} output tokens`,
        request: output.id,
      });
      continue;
    }
    if (entries.length === 0) continue;
    const prompt = testCase.workload.requests.find((request) => request.id === output.id)!.prompt;
    const reference = await oracle.processedOver([...prompt, ...output.tokens], sampling);
    let tied = false;
    for (const [index, entry] of entries.entries()) {
      const judged = judgeEntry(
        entry,
        output.tokens[index],
        reference.rows[prompt.length - 1 + index]!,
        k,
        oracle.epsilon,
      );
      if (judged.violation) {
        tally.fail({
          ...judged.violation,
          message: `request ${output.id} output token ${index}: ${judged.violation.message}`,
          request: output.id,
          index,
        });
        break;
      }
      tally.checked += 1;
      tied ||= judged.tie;
    }
    if (tied) tally.ties += 1;
  }
  return tally.result();
}

export const law: Law = {
  name: LOGPROB_PARITY,
  summary:
    "returned logprobs equal the cache-free rescore of the processed logits, one entry per token, top-k up to ties",
  appliesTo: (testCase) => testCase.workload.requests.some((request) => request.sampling?.logprobs !== undefined),
  needs: { baseline: "also-check", oracle: true },
  check: async ({ testCase, run, baseline, oracle }) => {
    const own = await checkLogprobs(testCase, run.outputs, oracle);
    return baseline ? combine(own, await checkLogprobs(testCase, baseline.outputs, oracle), "target-only run") : own;
  },
};
