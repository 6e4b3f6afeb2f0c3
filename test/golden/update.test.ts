// `golden update` regenerates a suite (here into a temporary directory, never golden/): the file it
// writes is valid, in the canonical format, and agrees with the checked-in one (same tokens and rounds;
// margins within epsilon, since ORT's last bits may differ between machines).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { goldenCommand } from "../../src/cli/golden.ts";
import { loadGoldenFile } from "../../src/golden/load.ts";
import { capture } from "../helpers/capture.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-golden-update-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("golden update", () => {
  it("regenerates a suite that agrees with the checked-in file", async () => {
    const result = await capture(() => goldenCommand(["update", "--suite", "tiny-f64-eagle", "--dir", dir]));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/tiny-f64-eagle\.json: 1 cases, \d+ tokens, margins min/);
    const fresh = loadGoldenFile(join(dir, "tiny-f64-eagle.json"));
    const checkedIn = loadGoldenFile("golden/tiny-f64-eagle.json");
    const strip = (golden: typeof fresh) =>
      golden.cases.map((c) => ({
        case: c.case,
        requests: c.expected.requests.map((r) => ({
          id: r.id,
          tokens: r.tokens,
          rounds: r.rounds.map((round) => ({ acceptLen: round.acceptLen, drafts: round.drafts })),
        })),
      }));
    expect(strip(fresh)).toEqual(strip(checkedIn));
    expect(fresh.models).toEqual(checkedIn.models);
    fresh.cases.forEach((goldenCase, c) =>
      goldenCase.expected.requests.forEach((request, r) =>
        request.margins.forEach((margin, i) =>
          expect(Math.abs(margin - checkedIn.cases[c].expected.requests[r].margins[i])).toBeLessThan(
            checkedIn.epsilon.target,
          ),
        ),
      ),
    );
    expect(readFileSync(join(dir, "tiny-f64-eagle.json"), "utf8").endsWith("}\n")).toBe(true);
  });

  it("refuses an unknown suite (exit 2) and writes nothing", async () => {
    const result = await capture(() => goldenCommand(["update", "--suite", "nope", "--dir", join(dir, "none")]));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^specconf golden update: --suite must be one of /);
  });
});
