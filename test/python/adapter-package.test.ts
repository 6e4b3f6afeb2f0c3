// python/specconf_adapter's own unittest suite, run with the machine's python3 (stdlib only, Python >= 3.10),
// so `npm test` (what CI runs) runs it too.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("python/specconf_adapter", () => {
  it("its unittest suite passes under the machine's python3", { timeout: 120_000 }, () => {
    const version = spawnSync("python3", ["-c", "import sys; print(sys.version_info >= (3, 10))"], {
      encoding: "utf8",
    });
    expect(version.stdout.trim(), "python3 >= 3.10 is on PATH").toBe("True");
    const result = spawnSync("python3", ["-m", "unittest", "discover", "-s", "tests", "-t", "."], {
      cwd: "python",
      encoding: "utf8",
      timeout: 110_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    });
    expect(result.status, result.stderr).toBe(0);
    const ran = Number(/Ran (\d+) tests?/.exec(result.stderr)?.[1] ?? 0);
    expect(ran, result.stderr).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/\nOK\b/);
  });
});
