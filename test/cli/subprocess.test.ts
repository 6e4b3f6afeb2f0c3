// The contract as a user meets it, in real processes (`node bin/specconf.js`): bad input is one line and
// exit 2 with no stack trace; an interrupt (SIGINT, SIGTERM) is exit 130 / 143 with one line, leaving no
// partial file; `golden update` interrupted leaves the whole set as it was (all suites or none, no temp
// files); the package's golden files are found from any working directory; and a check where nothing
// was checked (an engine that supports no case) exits 1, not 0.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_TEST_SEED, seedFromEnv } from "../setup.ts";

const BIN = resolve("bin/specconf.js");
const dir = mkdtempSync(join(tmpdir(), "specconf-subprocess-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function specconf(argv: string[], options: { cwd?: string } = {}) {
  const result = spawnSync(process.execPath, [BIN, ...argv], { cwd: options.cwd, encoding: "utf8" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Whether the command has started (Linux): ONNX Runtime's library is mapped, which happens when the command
 * module loads, after bin/specconf.js installed its handlers. (Node's own SIGINT handler, present from the
 * first moment, re-raises the signal: before bin runs, a process simply dies of it.)
 */
function started(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/maps`, "utf8").includes("onnxruntime");
  } catch {
    return false;
  }
}

/**
 * Starts a command and sends `signal` `delayMs` after stderr shows `ready` (or after the command started);
 * returns how it ended.
 */
function interrupted(
  argv: string[],
  signal: NodeJS.Signals,
  when: { ready?: RegExp; delayMs?: number },
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...argv], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    let armed = false;
    const arm = () => {
      if (!armed) setTimeout(() => child.kill(signal), when.delayMs ?? 0);
      armed = true;
    };
    child.stdout.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
      if (when.ready?.test(stderr)) arm();
    });
    const poll = setInterval(() => {
      if (!when.ready && started(child.pid!)) {
        clearInterval(poll);
        arm();
      }
    }, 20);
    child.on("close", (code) => {
      clearInterval(poll);
      done({ code, stderr, stdout });
    });
  });
}

describe("specconf as a process", () => {
  it("bad input: exit 2, one line, no stack trace", () => {
    for (const argv of [
      ["run", "--steps", "0"],
      ["run", "--chunk", "-3"],
      ["replay", join(dir, "none.json")],
      ["nope"],
    ]) {
      const { code, stderr } = specconf(argv);
      expect(code, stderr).toBe(2);
      expect(stderr.trimEnd().split("\n"), stderr).toHaveLength(1);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("SIGINT and SIGTERM end a check with 130 and 143 and one line; nothing is written", async () => {
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const) {
      const failures = join(dir, `failures-${signal}`);
      const result = await interrupted(
        ["check", "--law", "positions", "--runs", "100000", "--failures", failures],
        signal,
        { ready: /seed \d+/, delayMs: 500 },
      );
      expect(result.code, result.stderr).toBe(code);
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines[lines.length - 1]).toBe(`specconf check: interrupted by ${signal}; nothing was half-written`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(() => readdirSync(failures)).toThrow();
    }
  });

  it(
    "golden update interrupted at a seeded moment leaves every suite as it was, or all of them new",
    { timeout: 120_000 },
    async () => {
      const suites = ["small-gqa-mirror", "tiny-f64-eagle"];
      const golden = join(dir, "golden");
      spawnSync("mkdir", ["-p", golden]);
      // The old files differ from what update writes, so a mixed set would show.
      const old = new Map<string, string>();
      for (const suite of suites) {
        const path = join(golden, `${suite}.json`);
        copyFileSync(`golden/${suite}.json`, path);
        const text = readFileSync(path, "utf8").replace(/"description": "/, '"description": "OLD ');
        writeFileSync(path, text);
        old.set(suite, text);
      }
      const rng = xoroshiro128plus(seedFromEnv(process.env.SPECCONF_SEED) ?? DEFAULT_TEST_SEED);
      const delayMs = uniformInt(rng, 0, 6000);
      const result = await interrupted(
        ["golden", "update", "--dir", golden, ...suites.flatMap((suite) => ["--suite", suite])],
        "SIGINT",
        { delayMs },
      );
      expect([0, 130], `after ${delayMs} ms: ${result.stderr}`).toContain(result.code);
      expect(readdirSync(golden).sort(), "no temp or backup file is left").toEqual(
        suites.map((suite) => `${suite}.json`),
      );
      const rewritten = suites.filter(
        (suite) => readFileSync(join(golden, `${suite}.json`), "utf8") !== old.get(suite),
      );
      expect(rewritten, `after ${delayMs} ms, exit ${result.code}`).toEqual(result.code === 0 ? suites : []);
      if (result.code === 130)
        expect(result.stderr.trimEnd().split("\n").pop()).toBe(
          "specconf golden update: interrupted by SIGINT; nothing was half-written",
        );
    },
  );

  it(
    "outside the repository, check --engine finds the package's golden files; an engine that supports nothing checks nothing: exit 1",
    { timeout: 120_000 },
    () => {
      const engine = `${process.execPath} ${resolve("test/fixtures/unsupported-engine.mjs")}`;
      const { code, stdout, stderr } = specconf(["check", "--engine", engine, "--golden"], { cwd: dir });
      expect(code, stderr).toBe(1);
      expect(stdout).toMatch(/skipped \(/);
      expect(stdout).toMatch(/nothing was checked/);
    },
  );
});
