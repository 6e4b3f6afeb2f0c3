// What a law is (in the spirit of ajv's one-keyword-per-file `def`): each law's file exports one
// definition saying when the law applies to a case, what it needs (a target-only baseline, a twin run,
// engine internals), why a given run cannot show it, and a pure check over read-only inputs. The runner
// (runner.ts) reads these fields and nothing else: it never asks which law it is running.
import type { Case } from "../case/case.ts";
import type { CrashedRun, RunResult } from "../trace/run-result.ts";
import type { LawResult } from "./law.ts";
import type { ReferenceOracle } from "../reference/oracle.ts";

/**
 * A twin: the case changed in one dimension the law says must not matter. Twins of invariance laws each
 * differ from the case in a dimension of their own, so the runner may compose them into one canonical
 * twin that differs in all of them at once and stands for every such law while it agrees.
 */
export interface TwinSpec {
  /** Memo key and report name ("unchunked"). */
  readonly kind: string;
  /** In messages: "the unchunked run". */
  readonly describe: string;
  of(testCase: Readonly<Case>): Case;
  /** The law compares per-request projections only, so the composed canonical twin may stand in for it. */
  readonly composable: boolean;
}

export interface LawNeeds {
  /**
   * The target-only run of the same workload (fault-free on the reference engine): "compare" laws cannot be
   * checked without it; "also-check" laws check it too when the source has one.
   */
  readonly baseline?: "compare" | "also-check";
  /** The twin run the law compares with. */
  readonly twin?: TwinSpec;
  /** The reference engine's own bookkeeping (pool integrity checks per step); a trace does not carry it. */
  readonly internals?: boolean;
  /** Cache-free recomputations of the models (the oracle): the costly part of a check. */
  readonly oracle?: boolean;
  /**
   * A run on fresh randomness the law asks for only when its first look fails (LawInputs.confirm): a
   * statistical law rejects only when independent data reject too (issue 25), so its false-alarm rate is the
   * product of the two levels and shrinking keeps the rule (every shrink step is checked the same way).
   */
  readonly confirmation?: TwinSpec;
}

/** Everything a check reads; the runner fills exactly what the law's needs ask for. */
export interface LawInputs {
  readonly testCase: Readonly<Case>;
  /** The case's own run (speculative unless the case says target-only). */
  readonly run: Readonly<RunResult>;
  readonly baseline?: Readonly<RunResult>;
  readonly twin?: Readonly<RunResult>;
  /** Cache-free references of the case's models (memoized per token sequence). */
  readonly oracle: ReferenceOracle;
  /** The needs.confirmation run, on demand; undefined when the source cannot run it (recorded traces). */
  readonly confirm?: () => Promise<Readonly<RunResult> | undefined>;
}

export interface Law {
  readonly name: string;
  /** One line for `specconf check --help`, reports and docs. */
  readonly summary: string;
  /** Decided from the case alone, before anything runs. */
  appliesTo(testCase: Readonly<Case>): boolean;
  readonly needs: LawNeeds;
  /**
   * Why this run cannot show the law (nothing of its kind happened, or the fields it reads are absent);
   * undefined when it can. Pure.
   */
  unavailable?(inputs: LawInputs): string | undefined;
  check(inputs: LawInputs): LawResult | Promise<LawResult>;
  /**
   * What a run that failed part way still shows of this law: the engine's own per-step checks recorded
   * before it failed (a slot leak that later exhausts the pool). Undefined: nothing to judge. Pure.
   */
  checkCrashed?(before: CrashedRun["before"]): LawResult | undefined;
}

/** A law result carrying its law's name. */
export function named(law: Law, result: Omit<LawResult, "law">): LawResult {
  return { ...result, law: law.name };
}
