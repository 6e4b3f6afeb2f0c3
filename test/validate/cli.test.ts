// The command-line flow a user follows: `golden dump` the reference engine's outputs and traces (here
// with a fault on), then `validate` them: exit 1 naming the broken laws; fault off: exit 0.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { goldenCommand } from "../../src/cli/golden.ts";
import { validateCommand } from "../../src/cli/validate.ts";
import { PROFILES } from "../../src/profiles/profiles.ts";
import type { ValidationReport } from "../../src/validate/validate.ts";
import { capture } from "../helpers/capture.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-validate-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("golden dump | validate", () => {
  it("a faulty engine's dump fails exactly the broken laws (exit 1); a clean one holds (exit 0)", async () => {
    const golden = "golden/tiny-eagle.json";
    const faulty = join(dir, "faulty.jsonl");
    const dump = await capture(() =>
      goldenCommand([
        "dump",
        "--golden",
        golden,
        "--outputs",
        faulty,
        "--trace-dir",
        join(dir, "faulty"),
        "--fault",
        "chunked-tail-token",
      ]),
    );
    expect(dump.code, dump.stderr).toBe(0);
    expect(readFileSync(faulty, "utf8").trim().split("\n")).toHaveLength(7);
    const traces = ["chunked", "unchunked-s2"].map((name) => `--trace=${join(dir, "faulty", `${name}.trace.json`)}`);
    const result = await capture(() => validateCommand(["--golden", golden, "--outputs", faulty, ...traces, "--json"]));
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as ValidationReport;
    const failingTrace = report.traces.flatMap((trace) =>
      trace.laws.filter((law) => law.status === "fails").map((law) => `${trace.case}: ${law.law}`),
    );
    // The chunk tail only exists with chunking: the unchunked case is untouched.
    expect(failingTrace).toEqual(["chunked: draft reference", "chunked: rows carry request tokens"]);
    const failingOutputs = new Set(
      report.requests.flatMap((request) =>
        request.checks.filter((check) => check.status === "fails").map((check) => `${request.case}: ${check.law}`),
      ),
    );
    expect([...failingOutputs].sort()).toEqual(["chunked: accept lengths", "chunked: first-round drafts"]);

    const text = await capture(() => validateCommand(["--golden", golden, "--outputs", faulty, ...traces]));
    expect(text.stdout).toMatch(/failures \(first divergence\):\n/);
    expect(text.stdout).toMatch(
      /\n {2}chunked request \d+ \(line \d+\), first-round drafts: request \d+ first-round draft \d+: got \d+, golden \d+ \(draft margin/,
    );
    expect(text.stdout).toMatch(/draft reference +FAILS/);
    expect(text.stdout).toMatch(/: exit 1\n$/);

    const clean = join(dir, "clean.jsonl");
    expect(
      (
        await capture(() =>
          goldenCommand(["dump", "--golden", golden, "--outputs", clean, "--trace-dir", join(dir, "clean")]),
        )
      ).code,
    ).toBe(0);
    const ok = await capture(() =>
      validateCommand([
        "--golden",
        golden,
        "--outputs",
        clean,
        `--trace=${join(dir, "clean", "chunked.trace.json")}`,
        "--profile",
        "sglang",
      ]),
    );
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toMatch(/0 fail/);
    // The sglang profile is named with each of its relaxations, none triggered by the reference engine.
    expect(ok.stdout).toMatch(/profile sglang .*relaxations/);
    expect(ok.stdout.match(/not triggered/g)).toHaveLength(PROFILES.sglang!.relaxations.length);
  });

  it("golden subcommands: unknown is exit 2, help is exit 0", async () => {
    expect((await capture(() => goldenCommand(["frobnicate"]))).code).toBe(2);
    expect((await capture(() => goldenCommand(["--help"]))).code).toBe(0);
    const verify = await capture(() => goldenCommand(["verify", join(dir, "missing.json")]));
    expect(verify.code).toBe(2);
    expect(verify.stderr).toBe(`specconf golden verify: ${join(dir, "missing.json")}: file not found\n`);
  });
});
