// Where the llama-server binary comes from: scripts/llama-server/build.sh builds it once per llama.cpp commit
// from the source node-llama-cpp ships (its git bundle) into a cache that survives on the machine
// (~/.cache/specconf/llama-server/<commit>, or $SPECCONF_CACHE), and prints the binary's path. This module
// asks the script (so the cache key and layout live in one place) and never builds implicitly: an engine
// started without a build fails with the one command that makes it (`specconf engine llama-server --build`).
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BadInputError } from "../../errors/bad-input.ts";
import { packageJson } from "../../schema/package-json.ts";

/** The package root (this file is src/adapter/llama-server/binary.ts). */
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const BUILD_SCRIPT = join(PACKAGE_ROOT, "scripts/llama-server/build.sh");
/** node-llama-cpp's llama.cpp source, wherever npm put the package (nested in a checkout, hoisted beside an
 * installed specconf); it is an optional peer dependency, so the checkout's path stands in when it is absent. */
export const SOURCE_BUNDLE = join(nodeLlamaCppRoot(), "llama/gitRelease.bundle");

function nodeLlamaCppRoot(): string {
  try {
    // Its entry is <root>/dist/index.js.
    return dirname(dirname(createRequire(import.meta.url).resolve("node-llama-cpp")));
  } catch {
    return join(PACKAGE_ROOT, "node_modules/node-llama-cpp");
  }
}

/** build.sh's own flags plus the bundle found above (its default is the checkout's node_modules). */
const scriptArgs = (extra: string[]) => [BUILD_SCRIPT, "--bundle", SOURCE_BUNDLE, ...extra];

/** The binary cannot be found or built (bad input to the engine command: exit 2 with one line). */
export class LlamaServerBinaryError extends BadInputError {
  constructor(message: string) {
    super(message);
    this.name = "LlamaServerBinaryError";
  }
}

/** The llama.cpp commit of the shipped source bundle (its one head). */
export function bundleCommit(bundle: string = SOURCE_BUNDLE): string {
  if (!existsSync(bundle)) {
    const pin = packageJson().peerDependencies?.["node-llama-cpp"] ?? "";
    throw new LlamaServerBinaryError(
      `no llama.cpp source at ${bundle}: it comes with node-llama-cpp, an optional peer dependency: npm install node-llama-cpp@${pin}`,
    );
  }
  const listed = spawnSync("git", ["bundle", "list-heads", bundle], { encoding: "utf8" });
  const commit = listed.stdout?.split(/\s+/)[0] ?? "";
  if (listed.status !== 0 || !/^[0-9a-f]{40}$/.test(commit))
    throw new LlamaServerBinaryError(`cannot read the llama.cpp commit of ${bundle} (git bundle list-heads failed)`);
  return commit;
}

/** The cached build's binary (optionally of a patched source), or undefined when it was never built. */
export function cachedBinary(patch?: string): string | undefined {
  const args = scriptArgs(["--print-path", ...(patch ? ["--patch", patch] : [])]);
  const result = spawnSync("bash", args, { encoding: "utf8" });
  if (result.status !== 0) return undefined;
  const path = result.stdout.trim().split("\n").pop() ?? "";
  return existsSync(path) ? path : undefined;
}

/** Builds (or reuses) the binary; the script's progress goes to `log`. Resolves to the binary's path. */
export function buildBinary(options: { patch?: string; log: (line: string) => void }): Promise<string> {
  if (!existsSync(SOURCE_BUNDLE)) bundleCommit(); // throws the error that says where the source comes from
  const args = scriptArgs(options.patch ? ["--patch", options.patch] : []);
  return new Promise((resolvePath, reject) => {
    const child = spawn("bash", args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let lastError = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      lastError = text.trim().split("\n").pop() ?? lastError;
      options.log(text);
    });
    child.on("error", (error) => reject(new LlamaServerBinaryError(`cannot run ${BUILD_SCRIPT}: ${error.message}`)));
    child.on("close", (code) => {
      const path = stdout.trim().split("\n").pop() ?? "";
      if (code === 0 && existsSync(path)) resolvePath(path);
      else reject(new LlamaServerBinaryError(lastError || `${BUILD_SCRIPT} exited with ${code}`));
    });
  });
}

/** The binary to run: an explicit path, else the cached build; a missing one names the command that builds it. */
export function resolveBinary(explicit?: string): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new LlamaServerBinaryError(`--binary: no file ${explicit}`);
    return resolve(explicit);
  }
  const cached = cachedBinary();
  if (cached) return cached;
  throw new LlamaServerBinaryError(
    `llama-server is not built for llama.cpp ${bundleCommit().slice(0, 10)}: run \`npx specconf engine llama-server --build\` (or bash scripts/llama-server/build.sh)`,
  );
}
