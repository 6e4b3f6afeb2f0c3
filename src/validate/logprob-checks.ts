// The logprobs check of one request's outputs against its golden expectation: one entry per output
// token, for that token, within epsilon of the golden rescore (the log-softmax of the processed logits),
// with the golden number of top alternatives, each within epsilon of its golden value; an alternative
// outside the golden top-k is a tie when the golden k-th and (k+1)-th logprobs are within epsilon and
// its own logprob is at that boundary. Entries after the token comparison stopped (a tie or divergence)
// are conditioned on other tokens and are not judged.
import { notCheckable, type LawResult, type LawViolation } from "../laws/law.ts";
import type { GoldenLogprob, GoldenRequest } from "../golden/schema.ts";
import type { Logprob, LogprobEntry } from "../sampling/params.ts";
import type { ReportedOutput } from "../trace/outputs-line.ts";

export const LOGPROBS = "logprobs";

/** Judges one entry; a violation message, or whether it was a boundary tie. Pure. */
function judge(entry: LogprobEntry, golden: GoldenLogprob, epsilon: number): { message?: string; tie: boolean } {
  const near = (a: number, b: number) => Math.abs(a - b) < epsilon;
  if (!near(entry.logprob, golden.logprob))
    return { message: `logprob ${entry.logprob}, golden ${golden.logprob}`, tie: false };
  if (entry.top.length !== golden.top.length)
    return { message: `${entry.top.length} top alternatives, golden ${golden.top.length}`, tie: false };
  const kth = golden.top[golden.top.length - 1]?.logprob;
  const boundaryTie = kth !== undefined && golden.next !== null && kth - golden.next < epsilon;
  let tie = false;
  for (const alternative of entry.top) {
    const expected = golden.top.find((candidate: Logprob) => candidate.token === alternative.token);
    if (expected) {
      if (!near(alternative.logprob, expected.logprob))
        return {
          message: `top alternative ${alternative.token}: logprob ${alternative.logprob}, golden ${expected.logprob}`,
          tie,
        };
      continue;
    }
    if (!boundaryTie || !(alternative.logprob > kth - epsilon))
      return { message: `top alternative ${alternative.token} is not among the golden top ${golden.top.length}`, tie };
    tie = true;
  }
  return { tie };
}

export function checkGoldenLogprobs(
  golden: GoldenRequest,
  output: ReportedOutput,
  epsilon: number,
  stopIndex: number | undefined,
): LawResult {
  const id = golden.id;
  if (!golden.logprobs) return notCheckable(LOGPROBS, "the golden request asks for no logprobs");
  if (!output.logprobs) return notCheckable(LOGPROBS, "the output has no logprobs");
  const fail = (checked: number, violation: LawViolation): LawResult => ({
    law: LOGPROBS,
    status: "fails",
    checked,
    ties: 0,
    violation,
  });
  if (output.logprobs.length !== output.tokens.length)
    return fail(0, {
      message: `request ${id}: ${output.logprobs.length} logprob entries for ${output.tokens.length} tokens`,
      request: id,
    });
  const end = Math.min(stopIndex ?? Infinity, golden.tokens.length, output.tokens.length);
  let ties = 0;
  for (let index = 0; index < end; index++) {
    const entry = output.logprobs[index];
    const judged =
      entry.token !== output.tokens[index]
        ? { message: `the entry is for token ${entry.token}, the output token is ${output.tokens[index]}`, tie: false }
        : judge(entry, golden.logprobs[index], epsilon);
    if (judged.message)
      return fail(index, { message: `request ${id} token ${index}: ${judged.message}`, request: id, index });
    if (judged.tie) ties = 1;
  }
  return { law: LOGPROBS, status: "holds", checked: end, ties };
}
