// The one verdict vocabulary every command prints: "holds", "FAILS", "not checkable", ties counted next to
// the word. (Issue 24: commands used to render verdicts inline with three vocabularies: "not checkable",
// "n/c", "ok".)
import type { LawResult, LawStatus } from "../laws/law.ts";

export const VERDICT_WORDS: Readonly<Record<LawStatus, string>> = {
  holds: "holds",
  fails: "FAILS",
  "not-checkable": "not checkable",
};

/** The verdict word with the ties it counted: "holds (2 ties)". */
export function verdictText(result: Pick<LawResult, "status" | "ties">): string {
  const word = VERDICT_WORDS[result.status];
  return result.ties > 0 ? `${word} (${result.ties} tie${result.ties > 1 ? "s" : ""})` : word;
}

/**
 * One law's line in a list of verdicts: name, verdict, relaxations, then the violation (unless the report
 * lists violations apart) or why the law was not checkable.
 */
export function lawLine(result: LawResult & { relaxedBy?: string[] }, withViolation = true): string {
  const relaxed = result.relaxedBy?.length ? ` [relaxed: ${result.relaxedBy.join(", ")}]` : "";
  const detail =
    withViolation && result.violation
      ? `: ${result.violation.message}`
      : result.status === "not-checkable" && result.reason
        ? `: ${result.reason}`
        : "";
  return `  ${result.law.padEnd(24)} ${verdictText(result)}${relaxed}${detail}`;
}
