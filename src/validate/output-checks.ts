// Checks of one request's outputs against its golden expectation, tie-aware with the stored margins:
// the golden tokens are the target's greedy output, so comparing another engine's tokens with them is
// teacher-forced up to the first difference, where the stored margin decides (below epsilon: a tie, the
// comparison stops and the tie is counted).
import { notCheckable, type LawResult } from "../laws/law.ts";
import { compareTokens } from "../trace/compare.ts";
import type { GoldenRequest } from "../golden/schema.ts";
import type { ReportedOutput } from "../trace/outputs-line.ts";
import { hasRelaxation, RELAXATIONS, type RelaxationLog } from "../profiles/profiles.ts";
import { checkGoldenLogprobs, LOGPROBS } from "./logprob-checks.ts";

export const GOLDEN_TOKENS = "golden tokens";
export const ACCEPT_LENGTHS = "accept lengths";
export const FIRST_ROUND_DRAFTS = "first-round drafts";
export const OUTPUT_CHECKS = [GOLDEN_TOKENS, ACCEPT_LENGTHS, FIRST_ROUND_DRAFTS, LOGPROBS] as const;

export interface Epsilon {
  target: number;
  draft: number;
}

export interface RequestChecks {
  results: LawResult[];
  /** Output index where the token comparison stopped (a tie or a divergence); later rounds are not judged. */
  stopIndex?: number;
}

function holds(law: string, checked: number, ties = 0): LawResult {
  return { law, status: "holds", checked, ties };
}

function fails(law: string, checked: number, violation: NonNullable<LawResult["violation"]>, ties = 0): LawResult {
  return { law, status: "fails", checked, ties, violation };
}

export function checkGoldenTokens(
  golden: GoldenRequest,
  output: ReportedOutput,
  epsilon: number,
): { result: LawResult; stopIndex?: number } {
  const id = golden.id;
  const comparison = compareTokens(golden.tokens, golden.margins, output.tokens, epsilon);
  const prefixAllowed = output.finishReason === "abort";
  if (comparison.status === "equal") {
    const difference =
      output.finishReason && output.finishReason !== golden.finishReason
        ? `finish reason '${output.finishReason}', golden '${golden.finishReason}'`
        : output.stopTokenId !== undefined && output.stopTokenId !== golden.stopTokenId
          ? `stop id ${output.stopTokenId}, golden ${golden.stopTokenId ?? "none"}`
          : output.finishedLength !== undefined && output.finishedLength !== output.tokens.length
            ? `finished length ${output.finishedLength} for ${output.tokens.length} tokens`
            : undefined;
    if (difference)
      return {
        result: fails(GOLDEN_TOKENS, comparison.compared, { message: `request ${id}: ${difference}`, request: id }),
      };
    return { result: holds(GOLDEN_TOKENS, comparison.compared) };
  }
  const index = comparison.index!;
  if (comparison.status === "tie") return { result: holds(GOLDEN_TOKENS, comparison.compared, 1), stopIndex: index };
  if (comparison.got === undefined) {
    if (prefixAllowed) return { result: holds(GOLDEN_TOKENS, comparison.compared), stopIndex: index };
    return {
      result: fails(GOLDEN_TOKENS, comparison.compared, {
        message: `request ${id}: ${output.tokens.length} tokens, golden has ${golden.tokens.length} (golden finish '${golden.finishReason}')`,
        request: id,
        index,
        expected: comparison.expected,
      }),
      stopIndex: index,
    };
  }
  if (comparison.expected === undefined) {
    return {
      result: fails(GOLDEN_TOKENS, comparison.compared, {
        message: `request ${id}: ${output.tokens.length} tokens, golden stops after ${golden.tokens.length} (finish '${golden.finishReason}')`,
        request: id,
        index,
        got: comparison.got,
      }),
      stopIndex: index,
    };
  }
  return {
    result: fails(GOLDEN_TOKENS, comparison.compared, {
      message: `request ${id} token ${index}: got ${comparison.got}, golden ${comparison.expected} (reference margin ${comparison.margin!.toPrecision(4)} >= epsilon ${epsilon})`,
      request: id,
      index,
      expected: comparison.expected,
      got: comparison.got,
      margin: comparison.margin,
    }),
    stopIndex: index,
  };
}

/**
 * Accept lengths per round against the golden run's. Round k emits output tokens [o_k, o_k + a_k), o_0 = 1
 * (token 0 comes from prefill). At the first differing round the decisive draft is d_{j+1}, j = min(a, a') - 1:
 * a tie when the golden draft margin there, or the target margin at output o_k + j, is below epsilon.
 * The golden's last round is cut by EOS or max new tokens and is not compared.
 */
export function checkAcceptLengths(
  golden: GoldenRequest,
  output: ReportedOutput,
  epsilon: Epsilon,
  log: RelaxationLog,
  stopIndex: number | undefined,
): LawResult {
  const id = golden.id;
  if (!output.acceptLens) return notCheckable(ACCEPT_LENGTHS, "the output has no acceptLens");
  if (golden.rounds.length === 0) return notCheckable(ACCEPT_LENGTHS, "the golden case has no chain rounds");
  if (output.roundsIncludeFirstToken)
    return notCheckable(
      ACCEPT_LENGTHS,
      "the engine's rounds start at the first output token, the golden rounds after the prefill's sample: not comparable round by round (check --engine applies mirror acceptance to them)",
    );
  let lens = output.acceptLens;
  if (hasRelaxation(log.profile, RELAXATIONS.acceptLengthDraftsOnly)) {
    lens = lens.map((len) => len + 1);
    log.record(
      RELAXATIONS.acceptLengthDraftsOnly,
      lens.length,
      `request ${id}: ${lens.length} accept lengths read as drafts only`,
    );
  }
  const zero = lens.findIndex((len) => len < 1);
  if (zero >= 0) {
    return fails(ACCEPT_LENGTHS, 0, {
      message: `request ${id} round ${zero}: accept length ${lens[zero]} < 1 (SGLang v1's drafts-only accept_length? use --profile sglang-v1)`,
      request: id,
      index: zero,
      got: lens[zero],
    });
  }
  let offset = 1;
  let checked = 0;
  const lastGolden = golden.rounds.length - 1;
  for (let k = 0; k < Math.min(lens.length, golden.rounds.length); k++) {
    if (k === lastGolden) return holds(ACCEPT_LENGTHS, checked);
    const got = lens[k];
    const round = golden.rounds[k];
    if (stopIndex !== undefined && offset + Math.max(got, round.acceptLen) - 1 >= stopIndex)
      return holds(ACCEPT_LENGTHS, checked);
    checked += 1;
    if (got === round.acceptLen) {
      offset += got;
      continue;
    }
    const j = Math.min(got, round.acceptLen) - 1;
    const draftMargin = round.draftMargins[j];
    const targetMargin = golden.margins[offset + j];
    if (
      (draftMargin !== undefined && draftMargin < epsilon.draft) ||
      (targetMargin !== undefined && targetMargin < epsilon.target)
    )
      return holds(ACCEPT_LENGTHS, checked, 1);
    const margins = `draft ${j + 1}: draft margin ${draftMargin?.toPrecision(4) ?? "n/a"}, target margin ${targetMargin?.toPrecision(4) ?? "n/a"}`;
    return fails(ACCEPT_LENGTHS, checked, {
      message: `request ${id} round ${k} (output tokens from ${offset}): accept length ${got}, golden ${round.acceptLen} (${got > round.acceptLen ? "over" : "under"}-accepted; ${margins})`,
      request: id,
      index: k,
      expected: round.acceptLen,
      got,
      margin: draftMargin,
    });
  }
  if (lens.length < golden.rounds.length && output.finishReason !== "abort" && stopIndex === undefined) {
    return fails(ACCEPT_LENGTHS, checked, {
      message: `request ${id}: ${lens.length} rounds, golden ${golden.rounds.length}`,
      request: id,
      expected: golden.rounds.length,
      got: lens.length,
    });
  }
  return holds(ACCEPT_LENGTHS, checked);
}

export function checkFirstRoundDrafts(
  golden: GoldenRequest,
  output: ReportedOutput,
  epsilon: Epsilon,
  stopIndex: number | undefined,
): LawResult {
  const id = golden.id;
  if (!output.firstRoundDrafts) return notCheckable(FIRST_ROUND_DRAFTS, "the output has no firstRoundDrafts");
  const first = golden.rounds[0];
  if (!first) return notCheckable(FIRST_ROUND_DRAFTS, "the golden case has no chain rounds");
  if (output.roundsIncludeFirstToken)
    return notCheckable(
      FIRST_ROUND_DRAFTS,
      "the engine's first round drafts before the first output token, the golden's after it: not the same drafts",
    );
  if (stopIndex === 0)
    return notCheckable(FIRST_ROUND_DRAFTS, "the first output token already differs: the first round has another root");
  const comparison = compareTokens(first.drafts, first.draftMargins, output.firstRoundDrafts, epsilon.draft);
  if (comparison.status === "equal") return holds(FIRST_ROUND_DRAFTS, comparison.compared);
  if (comparison.status === "tie") return holds(FIRST_ROUND_DRAFTS, comparison.compared, 1);
  const index = comparison.index!;
  if (comparison.expected === undefined || comparison.got === undefined) {
    return fails(FIRST_ROUND_DRAFTS, comparison.compared, {
      message: `request ${id}: ${output.firstRoundDrafts.length} first-round drafts, golden ${first.drafts.length}`,
      request: id,
      index,
    });
  }
  return fails(FIRST_ROUND_DRAFTS, comparison.compared, {
    message: `request ${id} first-round draft ${index + 1}: got ${comparison.got}, golden ${comparison.expected} (draft margin ${comparison.margin!.toPrecision(4)} >= draft epsilon ${epsilon.draft})`,
    request: id,
    index,
    expected: comparison.expected,
    got: comparison.got,
    margin: comparison.margin,
  });
}

export function checkRequestOutput(
  golden: GoldenRequest,
  output: ReportedOutput,
  epsilon: Epsilon,
  log: RelaxationLog,
): LawResult[] {
  const tokens = checkGoldenTokens(golden, output, epsilon.target);
  return [
    tokens.result,
    checkAcceptLengths(golden, output, epsilon, log, tokens.stopIndex),
    checkFirstRoundDrafts(golden, output, epsilon, tokens.stopIndex),
    // Only requests asking for logprobs have the check (the other rows of the report show "-").
    ...(golden.logprobs ? [checkGoldenLogprobs(golden, output, epsilon.target, tokens.stopIndex)] : []),
  ];
}

export function missingOutput(golden: GoldenRequest): LawResult[] {
  return [
    fails(GOLDEN_TOKENS, 0, { message: `request ${golden.id}: no output line`, request: golden.id }),
    notCheckable(ACCEPT_LENGTHS, "no output line"),
    notCheckable(FIRST_ROUND_DRAFTS, "no output line"),
    ...(golden.logprobs ? [notCheckable(LOGPROBS, "no output line")] : []),
  ];
}
