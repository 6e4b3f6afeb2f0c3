// The JUnit XML reporter, for CI test tabs: `check` as one test case per law (its failure text: the shrunk
// case and the command that replays it; a law that judged nothing is <skipped> with why), `check --engine
// --golden` as one per golden case and law (a not-checkable verdict skipped). The attributes count all three.
import type { CheckSummary, EngineCheckSummary, Report } from "./summary.ts";

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

interface TestCase {
  classname: string;
  name: string;
  seconds: number;
  /** The failure's text (its first line is the message attribute), absent when it passed. */
  failure?: string;
  skipped?: string;
  out: string;
}

function testCaseXml(test: TestCase): string {
  const attributes = `classname="${escapeXml(test.classname)}" name="${escapeXml(test.name)}" time="${test.seconds.toFixed(3)}"`;
  const out = `<system-out>${escapeXml(test.out)}</system-out>`;
  if (test.skipped !== undefined)
    return `    <testcase ${attributes}><skipped message="${escapeXml(test.skipped)}"/>${out}</testcase>`;
  if (test.failure === undefined) return `    <testcase ${attributes}>${out}</testcase>`;
  return `    <testcase ${attributes}><failure message="${escapeXml(test.failure.split("\n")[0])}">${escapeXml(test.failure)}</failure>${out}</testcase>`;
}

function suitesXml(name: string, suiteName: string, tests: TestCase[]): string {
  // A skipped test is never counted as a failure too (testCaseXml writes one element or the other).
  const skipped = tests.filter((test) => test.skipped !== undefined).length;
  const failures = tests.filter((test) => test.failure !== undefined && test.skipped === undefined).length;
  const time = tests.reduce((sum, test) => sum + test.seconds, 0).toFixed(3);
  const counts = `tests="${tests.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}"`;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${escapeXml(name)}" ${counts}>`,
    `  <testsuite name="${escapeXml(suiteName)}" ${counts}>`,
    ...tests.map(testCaseXml),
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

/** A law that judged nothing is skipped, with why (issue 34: 0 passes and 0 failures read as a pass). */
function checkTests(summary: CheckSummary): TestCase[] {
  const notJudged = new Map(
    [...summary.judged.neverCheckable, ...summary.judged.noCase].map((entry) => [entry.law, entry]),
  );
  return summary.laws.map((law) => {
    const skipped = law.failed === 0 ? notJudged.get(law.name) : undefined;
    return {
      classname: "specconf.laws",
      name: law.name,
      seconds: law.seconds,
      failure:
        law.failed > 0
          ? [law.message ?? "the law failed", ...(law.diverged ? [law.diverged] : [])].join("\n")
          : undefined,
      ...(skipped ? { skipped: `${skipped.kind}: ${skipped.reason}` } : {}),
      out: `runs ${law.runs}, passed ${law.passed}, failed ${law.failed}, ties ${law.ties}, not checkable ${law.notCheckable}, seed ${summary.seed}`,
    };
  });
}

function engineGoldenTests(summary: EngineCheckSummary): TestCase[] {
  return summary.cases.flatMap((entry): TestCase[] =>
    entry.skipped !== undefined
      ? [{ classname: `specconf.golden.${entry.suite}`, name: entry.case, seconds: 0, skipped: entry.skipped, out: "" }]
      : entry.laws.map((law) => ({
          classname: `specconf.golden.${entry.suite}.${entry.case}`,
          name: law.law,
          seconds: 0,
          failure: law.status === "fails" ? (law.violation?.message ?? "the law failed") : undefined,
          ...(law.status === "not-checkable" ? { skipped: law.reason ?? "not checkable" } : {}),
          out: `checked ${law.checked}, ties ${law.ties}`,
        })),
  );
}

export function renderJunit(report: Report): string {
  switch (report.command) {
    case "check":
      return suitesXml("specconf check", `laws (seed ${report.summary.seed})`, checkTests(report.summary));
    case "check --engine --golden":
      return suitesXml("specconf check --engine --golden", report.summary.engine, engineGoldenTests(report.summary));
    default:
      throw new Error(`no JUnit report for ${report.command}`);
  }
}
