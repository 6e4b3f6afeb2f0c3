// What a law returns: holds, fails (with the first offending place), or not checkable (fields absent).
// Ties (a divergence where the reference's top-1 margin is below epsilon) are counted, never hidden.

export type LawStatus = "holds" | "fails" | "not-checkable";

export interface LawViolation {
  message: string;
  request?: number;
  event?: number;
  /** Token index within the request's output, or row within the event. */
  index?: number;
  expected?: number;
  got?: number;
  margin?: number;
}

export interface LawResult {
  law: string;
  status: LawStatus;
  /** Items compared (tokens, rounds, rows, events: the law says which). */
  checked: number;
  ties: number;
  violation?: LawViolation;
  /** Why the law could not be checked. */
  reason?: string;
}

export class LawTally {
  checked = 0;
  ties = 0;
  violation: LawViolation | undefined;

  constructor(readonly law: string) {}

  /** Records the first violation only: later ones are usually consequences of it. */
  fail(violation: LawViolation): void {
    this.violation ??= violation;
  }

  result(): LawResult {
    return {
      law: this.law,
      status: this.violation ? "fails" : "holds",
      checked: this.checked,
      ties: this.ties,
      ...(this.violation ? { violation: this.violation } : {}),
    };
  }
}

/** The same law over two runs (a case's run and its baseline): counts add up, the first failure wins. */
export function combine(first: LawResult, second: LawResult, secondName: string): LawResult {
  if (first.status === "not-checkable") return second;
  if (second.status === "not-checkable") return first;
  const tally = new LawTally(first.law);
  tally.checked = first.checked + second.checked;
  tally.ties = first.ties + second.ties;
  if (first.violation) tally.fail(first.violation);
  if (second.violation) tally.fail({ ...second.violation, message: `${secondName}: ${second.violation.message}` });
  return tally.result();
}

export function notCheckable(law: string, reason: string): LawResult {
  return { law, status: "not-checkable", checked: 0, ties: 0, reason };
}
