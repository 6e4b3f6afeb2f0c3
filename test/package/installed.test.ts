// Issue 36's first "done when": specconf used from another repository, as an engine team would. In a temporary
// directory outside this checkout: the npm package packed (`npm pack`, whose prepack builds dist/) and installed
// from its tarball into a fresh project, the Python package built into a wheel with the machine's pip and
// installed into a fresh virtualenv, then `npx specconf check --engine "python3 adapter.py" --runs 5` on a
// 37-line adapter importing the installed package (test/fixtures/installed/adapter.py: no sys.path entry),
// `npx specconf run` (the reference engine), and an API script importing "specconf" under plain node (no tsx:
// the installed package ships dist/ only).
// Network: only the npm registry, and the npm cache first (--prefer-offline): the tarball's dependencies are
// the checkout's, already cached by its `npm ci`. The pip steps use no index at all.
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repo = resolve(".");
const dir = mkdtempSync(join(tmpdir(), "specconf-installed-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const project = join(dir, "engine-repo");
const venv = join(dir, "venv");
const seed = process.env.SPECCONF_SEED ?? "1";
/** The machine's python3 (before the venv goes first on PATH): it builds the wheel and installs it. */
const hostPython = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], {
  encoding: "utf8",
}).stdout.trim();

/** The environment of a user's shell: no npm script variables (npm test sets them), no PYTHONPATH, the venv active. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: "1", VIRTUAL_ENV: venv };
  for (const key of Object.keys(env)) if (/^npm_(config|package|lifecycle)_/i.test(key)) delete env[key];
  delete env.PYTHONPATH;
  delete env.INIT_CWD;
  env.PATH = [join(venv, "bin"), ...(process.env.PATH ?? "").split(delimiter)].join(delimiter);
  return env;
}

const seconds: Record<string, number> = {};
function step(name: string, command: string, args: string[], options: SpawnSyncOptions = {}) {
  const start = performance.now();
  const result = spawnSync(command, args, { encoding: "utf8", env: userEnv(), timeout: 240_000, ...options });
  seconds[name] = Math.round((performance.now() - start) / 100) / 10;
  const output = `${String(result.stdout ?? "").slice(-2000)}\n${String(result.stderr ?? "").slice(-4000)}`;
  expect(result.status, `${name}: ${command} ${args.join(" ")}\n${output}`).toBe(0);
  return { stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe("specconf installed in an engine's repository", () => {
  it(
    "npm tarball + pip wheel in a fresh project and venv: check --engine passes, the API loads under node",
    {
      timeout: 600_000,
    },
    () => {
      // The npm package: packed (prepack builds dist/ afresh), installed as a dependency of a fresh project. Its
      // package.json denies onnxruntime-node's install script (it would download the CUDA provider; npm 11 runs
      // dependency scripts unless allowScripts says otherwise): docs/ci.md's recommendation for engine repos.
      step("npm pack", "npm", ["pack", "--pack-destination", dir], { cwd: repo });
      const tarball = join(
        dir,
        readdirSync(dir).find((name) => /^specconf-.*\.tgz$/.test(name))!,
      );
      mkdirSync(project);
      const manifest = {
        name: "engine-repo",
        private: true,
        type: "module",
        allowScripts: { "onnxruntime-node": false },
      };
      writeFileSync(join(project, "package.json"), JSON.stringify(manifest, null, 2));
      step("npm install", "npm", ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project });
      const installed = join(project, "node_modules/specconf");
      expect(existsSync(join(installed, "dist/index.js")) && existsSync(join(installed, "dist/index.d.ts"))).toBe(true);
      expect(existsSync(join(installed, "src")), "the package ships dist/, not the sources").toBe(false);

      // The Python package: a wheel built by the machine's pip (the package's own stdlib backend: no index needed),
      // installed into a fresh virtualenv with no index either.
      const wheels = join(dir, "wheels");
      step("pip wheel", "python3", [
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-index",
        "-w",
        wheels,
        join(repo, "python"),
      ]);
      const wheel = readdirSync(wheels).find((name) => name.endsWith(".whl"))!;
      step("venv", hostPython, ["-m", "venv", "--without-pip", venv]);
      const pip = ["-m", "pip", "--python", join(venv, "bin/python"), "install", "--no-index", join(wheels, wheel)];
      step("pip install", hostPython, pip);
      const where = step("import", "python3", ["-c", "import specconf_adapter as m; print(m.__file__)"], {
        cwd: project,
      });
      expect(where.stdout.trim().startsWith(venv), where.stdout).toBe(true);
      expect(existsSync(join(where.stdout.trim(), "../py.typed"))).toBe(true);

      // The engine team's adapter, beside the pure-Python Llama it runs (an example, not part of the package).
      copyFileSync(join(repo, "test/fixtures/installed/adapter.py"), join(project, "adapter.py"));
      copyFileSync(join(repo, "examples/toy_llama.py"), join(project, "toy_llama.py"));
      const npx = (name: string, args: string[]) => step(name, "npx", ["specconf", ...args], { cwd: project });
      expect(npx("--version", ["--version"]).stdout).toBe(
        `specconf ${JSON.parse(readFileSync("package.json", "utf8")).version}\n`,
      );
      expect(npx("help check", ["help", "check"]).stdout).toMatch(/^usage: specconf check/);
      // The reference engine itself, from the built package (ONNX Runtime loaded under plain node).
      expect(npx("run", ["run"]).stdout).toMatch(/lossless\s+holds/);
      const check = npx("check", ["check", "--engine", "python3 adapter.py", "--runs", "5", "--seed", seed, "--json"]);
      const report = JSON.parse(check.stdout) as {
        ok: boolean;
        laws: { name: string; passed: number; failed: number }[];
      };
      expect(report.ok).toBe(true);
      const judged = report.laws.filter((law) => law.passed > 0).map((law) => law.name);
      expect(judged).toEqual(expect.arrayContaining(["reference decode", "rows carry request tokens"]));
      expect(report.laws.every((law) => law.failed === 0)).toBe(true);

      // The API from plain node (the built package, resolved through its exports), and its types through tsc.
      copyFileSync(join(repo, "test/fixtures/installed/api.mjs"), join(project, "api.mjs"));
      const api = JSON.parse(step("api", "node", ["api.mjs"], { cwd: project }).stdout) as Record<string, unknown>;
      expect(api.resolved).toBe(new URL("node_modules/specconf/dist/index.js", `file://${project}/`).href);
      expect(api.failed).toEqual([]);
      expect(api.held).toEqual(expect.arrayContaining(["reference decode"]));
      copyFileSync(join(repo, "test/fixtures/installed/types.ts"), join(project, "types.ts"));
      const tsc = join(repo, "node_modules/typescript/bin/tsc");
      const tscFlags = ["--noEmit", "--strict", "--module", "nodenext", "--skipLibCheck", "types.ts"];
      step("tsc", "node", [tsc, ...tscFlags], { cwd: project });
      console.log(`installed-package steps (seconds): ${JSON.stringify(seconds)}`);
    },
  );
});
