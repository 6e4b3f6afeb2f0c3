// The public entry (issue 24): package.json `exports` resolves "specconf" to dist/index.js for the installed
// package and, under the "specconf-source" condition that tsconfig.json and vitest.config.ts set, to
// src/index.ts in a checkout (so a stale dist/ never shadows the source), which carries the documented names;
// docs show only that import path (a deep path in the docs would break on any move).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as publicApi from "specconf";
import { checkLaws } from "../src/check/runner.ts";
import { runCase } from "../src/engine/run-case.ts";
import { LAWS } from "../src/laws/registry.ts";

const root = new URL("../", import.meta.url);

describe("public entry", () => {
  it("resolves through package.json exports to the runner, the engine and the laws", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
    expect(pkg.exports["."]).toEqual({
      "specconf-source": "./src/index.ts",
      types: "./dist/index.d.ts",
      default: "./dist/index.js",
    });
    expect(publicApi.checkLaws).toBe(checkLaws);
    expect(publicApi.runCase).toBe(runCase);
    expect(publicApi.LAWS).toBe(LAWS);
    for (const name of ["ExternalSource", "validate", "lawByName", "loadCaseFile", "defaultCase"] as const)
      expect(typeof publicApi[name]).toBe("function");
  });

  it("is the only import path docs/ and README show for the programmatic API", () => {
    const docs = readdirSync(new URL("docs/", root)).filter((name) => name.endsWith(".md"));
    const files = ["README.md", ...docs.map((name) => `docs/${name}`)];
    for (const file of files) {
      const text = readFileSync(new URL(file, root), "utf8");
      const deepImports = [...text.matchAll(/^import .* from "(\.[^"]*)"/gm)].map((match) => match[1]);
      expect(deepImports, file).toEqual([]);
    }
  });
});
