// First contact: `npm ci` needs no environment variable. CI (.ci/run) sets none, the project's .npmrc
// skips onnxruntime-node's GPU download, and onnxruntime-node's install script, run as npm runs it (npm
// turns .npmrc into npm_config_onnxruntime_node_install), exits at once: a CPU user never downloads a GPU
// provider, and a machine that reaches only the npm registry installs. GPU users opt in (docs/gpu.md).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("installing with no environment variable", () => {
  it("CI sets no ONNXRUNTIME_NODE_INSTALL; .npmrc skips the provider download", () => {
    expect(readFileSync(".ci/run", "utf8")).not.toMatch(/ONNXRUNTIME_NODE_INSTALL/);
    expect(readFileSync(".npmrc", "utf8")).toMatch(/^onnxruntime-node-install=skip$/m);
  });

  it(
    "onnxruntime-node's postinstall, run through npm without the variable, downloads nothing",
    { timeout: 60_000 },
    () => {
      const env = { ...process.env };
      delete env.ONNXRUNTIME_NODE_INSTALL;
      for (const key of Object.keys(env)) if (key.toLowerCase().startsWith("npm_config_onnxruntime")) delete env[key];
      // A proxy that refuses every connection: a download attempt would fail the script.
      Object.assign(env, {
        HTTPS_PROXY: "http://127.0.0.1:9",
        HTTP_PROXY: "http://127.0.0.1:9",
        GLOBAL_AGENT_HTTPS_PROXY: "http://127.0.0.1:9",
      });
      const result = spawnSync(
        "npm",
        [
          "exec",
          "--offline",
          "-c",
          "node -e \"process.stdout.write(process.env.npm_config_onnxruntime_node_install ?? 'unset')\" && node node_modules/onnxruntime-node/script/install",
        ],
        { env, encoding: "utf8" },
      );
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.startsWith("skip"), result.stdout).toBe(true);
    },
  );
});
