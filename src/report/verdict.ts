// The one verdict vocabulary every command prints: "holds", "FAILS", "not checkable", ties counted next to
// the word. (Issue 24: commands used to render verdicts inline with three vocabularies: "not checkable",
// "n/c", "ok".) A check's verdict line counts what its laws judged (judged.ts): "holds" is a law's word for
// runs it judged, never the run's.
import type { LawResult, LawStatus } from "../laws/law.ts";
import type { JudgedLaws, NotJudged } from "./judged.ts";
import type { CheckSummary } from "./summary.ts";

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

/** Laws that judged nothing, grouped by why: "  a, b (no case drawn: it applies to none of the 28 generated cases)". */
export function notJudgedLines(judged: JudgedLaws): string[] {
  const lines: string[] = [];
  const groups = (entries: readonly NotJudged[]) => {
    const byReason = new Map<string, NotJudged[]>();
    for (const entry of entries) {
      // A not-checkable law's reason is its own words (the trace field or the run's shape it lacked).
      const key = entry.kind === "not checkable" ? entry.reason : `${entry.kind}: ${entry.reason}`;
      byReason.set(key, [...(byReason.get(key) ?? []), entry]);
    }
    return [...byReason].map(([key, group]) => `  ${group.map((entry) => entry.law).join(", ")} (${key})`);
  };
  const laws = (count: number) => `${count} law${count === 1 ? "" : "s"}`;
  if (judged.neverCheckable.length > 0)
    lines.push(
      `${laws(judged.neverCheckable.length)} never checkable (they applied to cases, but no run could be judged):`,
      ...groups(judged.neverCheckable),
    );
  if (judged.noCase.length > 0)
    lines.push(`${laws(judged.noCase.length)} with no applicable case:`, ...groups(judged.noCase));
  return lines;
}

/** The counts a check's verdict ends with: held, failed, never checkable, no applicable case. */
export function judgedCounts(judged: JudgedLaws): string {
  const failed = judged.failed.length > 0 ? `${judged.failed.length} failed, ` : "";
  return `${judged.held.length} of ${judged.total} laws held on at least one case, ${failed}${judged.neverCheckable.length} never checkable, ${judged.noCase.length} with no applicable case`;
}

/**
 * A check's last line. "holds" is never said of the run: a law that judged nothing did not hold, so a passing
 * check says no law failed and counts what held (issue 34: "every law holds" was printed when 8 of 43 had).
 */
export function checkVerdictLine(
  summary: Pick<CheckSummary, "seed" | "ok" | "judged" | "pinned">,
  why: readonly string[],
): string {
  // A passing check whose failed laws are all pinned findings says so (they are among the counts' "failed").
  const pinnedOnly = summary.ok && summary.judged.failed.length > 0 && (summary.pinned ?? []).length > 0;
  const passed = pinnedOnly ? "no law failed but the pinned findings" : "no law failed";
  const verdict = summary.ok ? passed : `FAILED${why.length > 0 ? ` (${why.join("; ")})` : ""}`;
  return `seed ${summary.seed}: ${verdict}: ${judgedCounts(summary.judged)}`;
}

/** Why a check failed, in a few words each (the lines above the verdict say more). */
export function checkFailedBecause(summary: CheckSummary): string[] {
  if (summary.ok) return [];
  const pinned = new Set((summary.pinned ?? []).map((pin) => pin.law));
  const failed = summary.laws.filter((law) => law.failed > 0 && !pinned.has(law.name)).map((law) => law.name);
  const why: string[] = [];
  if (failed.length > 0) why.push(`${failed.join(", ")} failed`);
  if (summary.coverage.below.length > 0) why.push(`coverage below the floor`);
  if ((summary.pinned ?? []).some((pin) => !pin.reproduced)) why.push("a pinned finding no longer fails");
  if (!summary.laws.some((law) => law.passed + law.failed > 0)) why.push("nothing was checked");
  if (summary.required?.unmet) why.push("--require-laws not met");
  return why;
}

/** A list of single-case verdicts counted: "3 hold, 1 FAILS, 2 not checkable" (a replay's, a golden case's). */
export function verdictCounts(results: readonly Pick<LawResult, "status">[]): string {
  const count = (status: LawStatus) => results.filter((result) => result.status === status).length;
  const holds = count("holds");
  const parts = [`${holds} law${holds === 1 ? "" : "s"} hold${holds === 1 ? "s" : ""}`];
  if (count("fails") > 0) parts.push(`${count("fails")} ${VERDICT_WORDS.fails}`);
  parts.push(`${count("not-checkable")} ${VERDICT_WORDS["not-checkable"]}`);
  return parts.join(", ");
}
