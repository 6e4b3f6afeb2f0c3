// What a check judged, as data (issue 34 item 5): every selected law in exactly one group: held on at least
// one case, failed, never checkable (it applied, but no run could be judged: the trace lacked what it reads,
// or the run's shape), or no applicable case (the engine lacks what its property needs, or no case drawn
// applied to it). `check --engine "python3 examples/toy_engine.py" --runs 2` used to end "every law holds"
// when 8 of 43 laws had held on a case; the verdict now counts each group, and reporters only format this
// (text.ts, junit.ts, html.ts), as fast-check's RunDetails is apart from its formatter.
import type { LawSummary } from "./summary.ts";
import type { LawResult } from "../laws/law.ts";

/** Why a law judged nothing. */
export type NotJudgedKind = "capability missing" | "not checkable" | "no case drawn";

export interface NotJudged {
  law: string;
  kind: NotJudgedKind;
  /** The engine's missing capability, the law's own reason (the trace field or run shape), or the runs drawn. */
  reason: string;
  /** Runs the law applied to (each one not checkable); 0 for no applicable case. */
  runs: number;
}

export interface JudgedLaws {
  /** Laws selected (every law, or --law's). */
  total: number;
  /** Held on at least one case and failed on none. */
  held: string[];
  /** Failed on at least one case (pinned findings included: the verdict excuses those). */
  failed: string[];
  /** Applied to some case, but every such run was not checkable. */
  neverCheckable: NotJudged[];
  /** Applied to no generated case. */
  noCase: NotJudged[];
}

export interface JudgedInput {
  selected: readonly string[];
  laws: readonly LawSummary[];
  /** Properties the engine could not run, and what it lacks (suite.ts notExercised). */
  notRun: readonly { law: string; reason: string }[];
  /** Cases the source ran (not skipped), and what they were ("generated", "golden"). */
  cases: number;
  caseKind?: string;
}

/** A law's reasons, most frequent first, as one string: the reason alone when every run gave it, else counted. */
function reasonText(reasons: Record<string, number> | undefined, runs: number): string {
  const entries = Object.entries(reasons ?? {}).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return "not checkable";
  if (entries.length === 1 && entries[0][1] === runs) return entries[0][0];
  const shown = entries.slice(0, 3).map(([reason, count]) => `${reason} (${count} of ${runs})`);
  const more = entries.length - shown.length;
  return [...shown, ...(more > 0 ? [`${more} other reason${more > 1 ? "s" : ""}`] : [])].join("; ");
}

export function judgeLaws(input: JudgedInput): JudgedLaws {
  const judged: JudgedLaws = { total: input.selected.length, held: [], failed: [], neverCheckable: [], noCase: [] };
  const rows = new Map(input.laws.map((row) => [row.name, row]));
  const notRun = new Map(input.notRun.map(({ law, reason }) => [law, reason]));
  for (const law of input.selected) {
    const row = rows.get(law);
    if (row && row.failed > 0) judged.failed.push(law);
    else if (row && row.passed > 0) judged.held.push(law);
    else if (row && row.runs > 0)
      judged.neverCheckable.push({
        law,
        kind: "not checkable",
        reason: reasonText(row.reasons, row.notCheckable),
        runs: row.runs,
      });
    else if (notRun.has(law))
      judged.noCase.push({ law, kind: "capability missing", reason: `the engine lacks ${notRun.get(law)}`, runs: 0 });
    else
      judged.noCase.push({
        law,
        kind: "no case drawn",
        reason: `it applies to none of the ${input.cases} ${input.caseKind ?? "generated"} cases`,
        runs: 0,
      });
  }
  return judged;
}

/** Laws that judged something (held or failed on a case): what --require-laws counts. */
export function judgedCount(judged: JudgedLaws): number {
  return judged.held.length + judged.failed.length;
}

/** --require-laws: at least this many laws judged, or each of these laws judged. */
export type LawRequirement = { count: number } | { laws: string[] };

/** The one line saying why the requirement is not met, or undefined when it is. */
export function unmetRequirement(requirement: LawRequirement, judged: JudgedLaws): string | undefined {
  if ("count" in requirement) {
    const count = judgedCount(judged);
    return count >= requirement.count
      ? undefined
      : `--require-laws ${requirement.count}: ${count} of ${judged.total} laws judged a case (held or failed), ${requirement.count} required`;
  }
  const notJudged = new Map([...judged.neverCheckable, ...judged.noCase].map((entry) => [entry.law, entry]));
  const missing = requirement.laws.filter((law) => notJudged.has(law));
  if (missing.length === 0) return undefined;
  const why = missing.map((law) => `'${law}' (${notJudged.get(law)!.kind}: ${notJudged.get(law)!.reason})`);
  return `--require-laws: ${missing.length} of the ${requirement.laws.length} required laws judged no case: ${why.join("; ")}`;
}

/** Single-case verdicts (check --engine --golden's cases) as law rows: each verdict one run of its law. */
export function rowsOfVerdicts(cases: readonly { laws: readonly LawResult[] }[]): LawSummary[] {
  const rows = new Map<string, LawSummary>();
  for (const verdict of cases.flatMap((entry) => entry.laws)) {
    const row = rows.get(verdict.law) ?? {
      name: verdict.law,
      ...{ runs: 0, passed: 0, failed: 0, ties: 0, notCheckable: 0, seconds: 0 },
    };
    row.runs += 1;
    row.ties += verdict.ties;
    if (verdict.status === "fails") row.failed += 1;
    else if (verdict.status === "holds") row.passed += 1;
    else {
      row.notCheckable += 1;
      const reason = verdict.reason ?? "not checkable";
      row.reasons = { ...row.reasons, [reason]: (row.reasons?.[reason] ?? 0) + 1 };
    }
    rows.set(verdict.law, row);
  }
  return [...rows.values()];
}
