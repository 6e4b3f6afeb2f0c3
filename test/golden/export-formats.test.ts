// `specconf export` over every golden suite and format (issue 36, part 7): each format writes every suite it
// can carry and lists each one it cannot with the reason; a suite it cannot carry is an error only when it is
// named. Before, `export --format gguf` with no suite named exited 2 on hybrid-mirror and wrote no suite at all.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BadInputError } from "../../src/errors/bad-input.ts";
import { EXPORT_FORMATS, exportGap, planExport } from "../../src/golden/export.ts";
import { goldenFilesIn, packageGoldenDir } from "../../src/golden/golden-dir.ts";
import { loadGoldenFile } from "../../src/golden/load.ts";

const dir = mkdtempSync(join(tmpdir(), "specconf-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const paths = goldenFilesIn(packageGoldenDir(), "--golden");
const goldens = paths.map((path) => ({ path, golden: loadGoldenFile(path) }));
const specconf = (args: string[]) => spawnSync("node", ["bin/specconf.js", ...args], { encoding: "utf8" });

describe("export: every golden suite in every format", () => {
  it("plans each suite a format can carry, and refuses the others with their gap's reason", () => {
    let gaps = 0;
    for (const format of EXPORT_FORMATS)
      for (const { golden } of goldens) {
        const gap = exportGap(golden, format);
        const label = `${golden.suite} as ${format}`;
        if (gap) {
          gaps++;
          expect(() => planExport(golden, format), label).toThrow(BadInputError);
          expect(() => planExport(golden, format), label).toThrow(gap.reason);
          continue;
        }
        const files = planExport(golden, format);
        expect(
          [...files.keys()].every((path) => path.startsWith(`${golden.suite}/`)),
          label,
        ).toBe(true);
        const manifest = JSON.parse(String(files.get(`${golden.suite}/manifest.json`)));
        expect(manifest, label).toMatchObject({ suite: golden.suite, format });
      }
    // ONNX carries every suite (the golden digests name its graphs); the hybrid presets have no GGUF form.
    for (const { golden } of goldens) expect(exportGap(golden, "onnx"), golden.suite).toBeUndefined();
    expect(gaps).toBeGreaterThan(0);
  });

  it.each(EXPORT_FORMATS)(
    "--format %s with no suite named writes every suite it can carry and lists the rest (exit 0)",
    { timeout: 120_000 },
    (format) => {
      const out = join(dir, format);
      const result = specconf(["export", "--format", format, "--out", out]);
      expect(result.status, result.stderr).toBe(0);
      for (const { golden } of goldens) {
        const gap = exportGap(golden, format);
        const manifest = join(out, golden.suite, "manifest.json");
        expect(existsSync(manifest), golden.suite).toBe(gap === undefined);
        if (gap) expect(result.stdout).toContain(`skipped ${golden.suite}: ${gap.reason}\n`);
        else expect(JSON.parse(readFileSync(manifest, "utf8")).format).toBe(format);
      }
      const skipped = result.stdout.split("\n").filter((line) => line.startsWith("skipped "));
      expect(skipped).toHaveLength(goldens.filter(({ golden }) => exportGap(golden, format)).length);
    },
  );

  it("a named suite the format cannot carry is bad input: exit 2, file and JSON path, nothing written", () => {
    const uncarried = EXPORT_FORMATS.flatMap((format) =>
      goldens.flatMap(({ path, golden }) => {
        const gap = exportGap(golden, format);
        return gap ? [{ format, path, suite: golden.suite, gap }] : [];
      }),
    );
    expect(uncarried.length).toBeGreaterThan(0);
    for (const { format, path, suite, gap } of uncarried) {
      const carried = goldens.find(({ golden }) => !exportGap(golden, format))!;
      const out = join(dir, `named-${format}`);
      // Named beside a suite it can carry: that one is not written either (all or nothing).
      const result = specconf(["export", "--format", format, "--golden", carried.path, "--golden", path, "--out", out]);
      expect(result.status, result.stderr).toBe(2);
      expect(result.stderr).toBe(`specconf export: ${path}: ${gap.jsonPath}: suite ${suite}: ${gap.reason}\n`);
      expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
    }
  });
});
