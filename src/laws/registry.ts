// Every law the harness knows, with when it applies and how it is checked on one generated case.
// The shared runner (check-case.ts) applies each law that applies to every run; `specconf check`,
// `specconf mutants` and the property suites all go through it. A new law goes here (and, when it is a
// single-run law `specconf run` reports, into check-run.ts too: test/laws/registry.test.ts keeps the two
// in step).
import type { Case } from "../case/case.ts";
import type { RunResult } from "../engine/run-case.ts";
import { ACCEPTANCE_CORRECTNESS, checkAcceptanceCorrectness } from "./acceptance-correctness.ts";
import { BATCH_INVARIANCE, checkBatchInvariance } from "./batch-invariance.ts";
import { BONUS_STRIDE, checkBonusStride } from "./bonus-stride.ts";
import { CHUNK_INVARIANCE, checkChunkInvariance, isChunked } from "./chunk-invariance.ts";
import { checkDraftReference, DRAFT_REFERENCE } from "./draft-reference.ts";
import { checkKvConservation, KV_CONSERVATION } from "./kv-conservation.ts";
import { LawTally, type LawResult } from "./law.ts";
import { checkLossless, LOSSLESS } from "./lossless.ts";
import { checkMirrorAcceptance, MIRROR_ACCEPTANCE } from "./mirror-acceptance.ts";
import type { ReferenceOracle } from "./oracle.ts";
import { checkPageSizeInvariance, PAGE_SIZE_INVARIANCE } from "./page-size-invariance.ts";
import { checkPerStepPools, PER_STEP_POOLS } from "./per-step-pools.ts";
import { checkReplayEquivalence, REPLAY_EQUIVALENCE } from "./replay-equivalence.ts";
import { checkRetractInvariance, RETRACT_INVARIANCE } from "./retract-invariance.ts";
import { checkPhaseContracts, PHASE_CONTRACTS } from "./phase-contracts.ts";
import { checkPositions, POSITIONS } from "./positions.ts";
import { checkReferenceDecode, REFERENCE_DECODE } from "./reference-decode.ts";
import { checkRowTokens, ROW_TOKENS } from "./row-tokens.ts";
import { checkTreeSelection, TREE_SELECTION } from "./tree-selection.ts";

/** The extra runs multi-run laws compare against (derived from the case; see each law's file). */
export type TwinKind = "unchunked" | "unpaged" | "reordered" | "eager" | "unretracted" | "canonical";

export interface LawContext {
  testCase: Case;
  /** The case's own run (speculative unless the case says target-only). */
  run: RunResult;
  /** Runs (once) and returns the fault-free target-only run of the same workload: lossless's baseline. */
  targetOnly(): Promise<RunResult>;
  oracle: ReferenceOracle;
  /** Runs (once) and returns a twin; throws if the twin run crashes. */
  twin(kind: TwinKind): Promise<RunResult>;
}

export interface LawDefinition {
  name: string;
  /** One line for `specconf check --help` and docs. */
  summary: string;
  /** Decided from the case alone, before anything runs. */
  applies(testCase: Case): boolean;
  /** The twin runs it needs. */
  twins?: readonly TwinKind[];
  /** It reads the target-only baseline (run once per case, before the laws, when a law needs it). */
  baseline?: boolean;
  /**
   * A per-request invariance (checkInvariance) whose twin differs from the case in one dimension only: it
   * also holds against the canonical twin, which differs in all of them at once (check-case.ts).
   */
  invariance?: boolean;
  check(context: LawContext): Promise<LawResult>;
}

const speculative = (testCase: Case) => testCase.engine.mode === "speculative";

/** Combines the same law over two runs: checked and ties add up, the first failure wins. */
export function combine(first: LawResult, second: LawResult): LawResult {
  if (first.status === "not-checkable") return second;
  if (second.status === "not-checkable") return first;
  const tally = new LawTally(first.law);
  tally.checked = first.checked + second.checked;
  tally.ties = first.ties + second.ties;
  if (first.violation) tally.fail(first.violation);
  if (second.violation) tally.fail({ ...second.violation, message: `target-only run: ${second.violation.message}` });
  return tally.result();
}

export const LAWS: readonly LawDefinition[] = [
  {
    name: REFERENCE_DECODE,
    summary: "outputs (speculative and target-only) equal a cache-free teacher-forced target forward",
    applies: () => true,
    baseline: true,
    check: async ({ run, targetOnly, oracle }) =>
      combine(
        await checkReferenceDecode(run.trace.requests, oracle),
        await checkReferenceDecode((await targetOnly()).trace.requests, oracle),
      ),
  },
  {
    name: LOSSLESS,
    summary: "speculative greedy output equals target-only greedy output",
    applies: speculative,
    baseline: true,
    check: async ({ run, targetOnly, oracle }) => {
      const baseline = new Map(((await targetOnly()).trace.requests ?? []).map((request) => [request.id, request]));
      return checkLossless(
        (run.trace.requests ?? []).map((request) => {
          const other = baseline.get(request.id);
          // An abort in either run cuts its output at a different token (steps emit different counts).
          return { request, targetOnly: other?.output ?? [], baselineAborted: other?.finishReason === "abort" };
        }),
        oracle,
      );
    },
  },
  {
    name: ACCEPTANCE_CORRECTNESS,
    summary: "accept_len - 1 is the depth the reference target accepts",
    applies: speculative,
    check: ({ run, oracle }) => checkAcceptanceCorrectness(run.trace, oracle),
  },
  {
    name: DRAFT_REFERENCE,
    summary: "draft tokens and logits equal a cache-free draft recomputation",
    applies: speculative,
    check: ({ run, oracle }) => checkDraftReference(run.trace, oracle),
  },
  {
    name: MIRROR_ACCEPTANCE,
    summary: "a mirror draft accepts every draft of every uncut round",
    applies: (testCase) =>
      speculative(testCase) && (testCase.draft?.kind === "mirror" || testCase.draft?.kind === "tapped-mirror"),
    check: ({ testCase, run, oracle }) =>
      checkMirrorAcceptance(run.trace, testCase.engine.numSteps, testCase.engine.numDraftTokens, oracle),
  },
  {
    name: POSITIONS,
    summary: "persisted KV contiguous per request and pool; each row attends exactly its request's earlier positions",
    applies: () => true,
    baseline: true,
    check: async ({ run, targetOnly }) =>
      combine(checkPositions(run.trace), checkPositions((await targetOnly()).trace)),
  },
  {
    name: ROW_TOKENS,
    summary:
      "every row carries its request's token: x at target rows, x_{i+1} at draft-extend anchor i, the drafted token at draft and verify rows",
    applies: () => true,
    baseline: true,
    check: async ({ run, targetOnly }) =>
      combine(checkRowTokens(run.trace), checkRowTokens((await targetOnly()).trace)),
  },
  {
    name: PHASE_CONTRACTS,
    summary: "hidden-state inputs come from the right phase, request and position; rows per request per phase",
    applies: speculative,
    check: async ({ run }) => checkPhaseContracts(run.trace),
  },
  {
    name: BONUS_STRIDE,
    summary: "accept_index entries stay in their request's block; the bonus is predict at the last accepted node",
    applies: speculative,
    check: async ({ run }) => checkBonusStride(run.trace),
  },
  {
    name: TREE_SELECTION,
    summary:
      "each draft step's frontier is the topk best children by cumulative log-probability; the verified set is the N - 1 best, ancestor-closed",
    applies: (testCase) => speculative(testCase) && testCase.engine.multiLayer !== true,
    check: async ({ run }) => checkTreeSelection(run.trace),
  },
  {
    name: PER_STEP_POOLS,
    summary: "in multi-layer drafting each step's forwards read and write only that step's pool",
    applies: (testCase) => speculative(testCase) && testCase.engine.multiLayer === true,
    check: async ({ run }) => checkPerStepPools(run.trace),
  },
  {
    name: KV_CONSERVATION,
    summary: "pools pass checkIntegrity() after every step and are empty at the end",
    applies: () => true,
    baseline: true,
    check: async ({ run, targetOnly }) => {
      const baseline = await targetOnly();
      return combine(
        checkKvConservation(run.poolChecks, run.steps, run.slotsInUseAtEnd),
        checkKvConservation(baseline.poolChecks, baseline.steps, baseline.slotsInUseAtEnd),
      );
    },
  },
  {
    name: CHUNK_INVARIANCE,
    summary: "tokens, draft chains, accept lengths and positions equal the unchunked run's",
    applies: isChunked,
    twins: ["unchunked"],
    invariance: true,
    check: async ({ run, twin }) => checkChunkInvariance(run.trace, (await twin("unchunked")).trace),
  },
  {
    name: PAGE_SIZE_INVARIANCE,
    summary: "tokens, draft chains, accept lengths and positions equal the page-size-1 run's",
    applies: (testCase) => testCase.engine.pageSize > 1,
    twins: ["unpaged"],
    invariance: true,
    check: async ({ run, twin }) => checkPageSizeInvariance(run.trace, (await twin("unpaged")).trace),
  },
  {
    name: BATCH_INVARIANCE,
    summary: "a request's tokens, drafts, accept lengths and positions do not depend on its batch or arrival order",
    applies: (testCase) => testCase.workload.requests.length > 1,
    twins: ["reordered"],
    invariance: true,
    check: async ({ run, twin }) => checkBatchInvariance(run.trace, (await twin("reordered")).trace),
  },
  {
    name: REPLAY_EQUIVALENCE,
    summary: "draft decode on captured, replayed graphs equals the eager run event for event",
    applies: (testCase) => speculative(testCase) && testCase.engine.graphReplay === true,
    twins: ["eager"],
    check: async ({ run, twin, oracle }) => {
      const relative = oracle.spec.dtype === "float32" ? 1e-5 : 1e-12;
      return checkReplayEquivalence((await twin("eager")).trace, run.trace, {
        epsilon: oracle.draftEpsilon,
        absolute: oracle.draftEpsilon,
        relative,
      });
    },
  },
  {
    name: RETRACT_INVARIANCE,
    summary: "a retracted and resumed request computes what it computes without the retract",
    applies: (testCase) => (testCase.workload.retracts ?? []).length > 0,
    twins: ["unretracted"],
    invariance: true,
    check: async ({ run, twin }) => checkRetractInvariance(run.trace, (await twin("unretracted")).trace),
  },
];

export const LAW_NAMES: readonly string[] = LAWS.map((law) => law.name);

export function lawByName(name: string): LawDefinition | undefined {
  const normal = (text: string) =>
    text
      .trim()
      .toLowerCase()
      .replace(/[-_\s]+/g, " ");
  return LAWS.find((law) => normal(law.name) === normal(name));
}
