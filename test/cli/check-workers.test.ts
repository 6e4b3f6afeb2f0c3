// check --workers and --shard (issue 26): the same seed gives the same verdicts, counts, shrunk case and
// replay command on one process or two, and two shards merged (specconf merge) equal one unsharded run.
// Shrinking gets all the time it needs (--shrink-seconds 600): a budget cut short by load is the one
// thing that could make two runs differ.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkCommand } from "../../src/cli/check.ts";
import { mergeCommand } from "../../src/cli/merge.ts";
import type { CheckSummary } from "../../src/report/summary.ts";

async function capture(command: (argv: string[]) => Promise<number>, argv: string[]) {
  let stdout = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    return { code: await command(argv), stdout };
  } finally {
    vi.restoreAllMocks();
  }
}

afterEach(() => vi.restoreAllMocks());

const ARGS = ["--law", "positions", "--runs", "4", "--seed", "3", "--fault", "cross-request-mask-leak"];
const ARGS_ALL = [...ARGS, "--shrink-seconds", "600", "--json"];

/** What must not depend on how the runs were split: everything but timings and the failure folder. */
/**
 * `text` with the failure folder `dir` renamed `to`: replay commands name it relative to the working directory
 * where that is shorter (a checkout under the temporary folder gets "../specconf-workers-..."), so both spellings.
 */
function renameDir(text: string, dir: string, to: string): string {
  return text.replaceAll(relative(process.cwd(), dir), to).replaceAll(dir, to);
}

function comparable(summary: CheckSummary, dir: string) {
  const text = renameDir(JSON.stringify({ ...summary, runSeconds: 0, shard: undefined }), dir, "DIR");
  const parsed = JSON.parse(text) as CheckSummary;
  for (const law of parsed.laws) law.seconds = 0;
  return parsed;
}

async function check(extra: string[]): Promise<{ code: number; summary: CheckSummary; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "specconf-workers-"));
  const { code, stdout } = await capture(checkCommand, [...ARGS_ALL, "--failures", dir, ...extra]);
  return { code, summary: JSON.parse(stdout), dir };
}

describe("check --workers, --shard and merge", () => {
  it("1 vs 2 workers: the same verdicts, counts, shrunk case and replay command", { timeout: 600_000 }, async () => {
    const one = await check(["--workers", "1"]);
    const two = await check(["--workers", "2"]);
    expect(one.code).toBe(1);
    expect(two.code).toBe(1);
    expect(comparable(two.summary, two.dir)).toEqual(comparable(one.summary, one.dir));
    const failed = one.summary.laws.find((law) => law.name === "positions")!;
    expect(failed.failed).toBeGreaterThan(0);
    // The shrunk case each wrote, byte for byte, under the same name.
    const caseFile = (dir: string, summary: CheckSummary) => {
      const record = summary.laws
        .find((law) => law.name === "positions")!
        .replay!.split(" ")
        .pop()!;
      return readFileSync(join(dir, basename(record).replace(/\.json$/, ".case.json")), "utf8");
    };
    expect(caseFile(two.dir, two.summary)).toBe(caseFile(one.dir, one.summary));
  });

  it("two shards merged give the verdicts and counts of one unsharded run", { timeout: 600_000 }, async () => {
    const whole = await check(["--workers", "1"]);
    const dir = mkdtempSync(join(tmpdir(), "specconf-shards-"));
    const reports: string[] = [];
    for (const shard of ["1/2", "2/2"]) {
      const part = await check(["--workers", "1", "--shard", shard]);
      expect(part.summary.shard?.chunks.length).toBeGreaterThan(0);
      const file = join(dir, `shard-${shard[0]}.json`);
      writeFileSync(file, renameDir(JSON.stringify(part.summary), part.dir, whole.dir));
      reports.push(file);
    }
    const merged = await capture(mergeCommand, [...reports, "--json", "--junit", join(dir, "merged.xml")]);
    expect(merged.code).toBe(whole.code);
    expect(comparable(JSON.parse(merged.stdout), whole.dir)).toEqual(comparable(whole.summary, whole.dir));
    expect(readFileSync(join(dir, "merged.xml"), "utf8")).toContain("<failure ");
    // A shard missing is bad input naming the field, not a wrong verdict.
    const partial = await capture(mergeCommand, [reports[0]]);
    expect(partial.code).toBe(2);
  });
});
