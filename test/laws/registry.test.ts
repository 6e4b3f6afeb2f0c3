// The registry is a plain list of the law files' definitions: the list equals the files, names are
// unique and resolve loosely, and no source file outside a law's own file compares that law's name (the
// runner and the CLI read definitions, never names; profiles name laws as data only).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { Law } from "../../src/laws/definition.ts";
import { combine } from "../../src/laws/law.ts";
import { LAW_NAMES, lawByName, LAWS } from "../../src/laws/registry.ts";
import { LAW_PROPERTIES } from "../../src/properties/law-properties.ts";

const LAW_DIR = "src/laws";

async function lawFiles(): Promise<Map<string, Law>> {
  const files = new Map<string, Law>();
  for (const name of readdirSync(LAW_DIR).filter((file) => file.endsWith(".ts"))) {
    const module = (await import(`../../${LAW_DIR}/${name}`)) as { law?: Law };
    if (module.law) files.set(join(LAW_DIR, name), module.law);
  }
  return files;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

describe("law registry", () => {
  it("lists exactly the law files, each file's definition once", async () => {
    const files = await lawFiles();
    expect([...files.values()].map((law) => law.name).sort()).toEqual([...LAW_NAMES].sort());
    for (const law of LAWS) expect([...files.values()]).toContain(law);
    expect(new Set(LAW_NAMES).size).toBe(LAWS.length);
  });

  it("every law has its property and its vitest suite (docs/laws.md, Adding a law)", async () => {
    const files = await lawFiles();
    const suites = readdirSync("test/properties/laws");
    for (const [file, law] of files) {
      expect(
        LAW_PROPERTIES.filter((property) => property.law === law.name),
        law.name,
      ).toHaveLength(1);
      const base = file.slice(LAW_DIR.length + 1, -".ts".length);
      expect(suites, law.name).toContain(`${base}.test.ts`);
      const suite = readFileSync(join("test/properties/laws", `${base}.test.ts`), "utf8");
      expect(suite, law.name).toContain(`src/properties/laws/${base}.ts`);
    }
  });

  it("no source file outside a law's own file compares that law's name", async () => {
    const files = await lawFiles();
    const offences: string[] = [];
    for (const file of sourceFiles("src")) {
      const text = readFileSync(file, "utf8");
      for (const [own, law] of files) {
        if (file === own) continue;
        const literal = `["'\`]${escape(law.name)}["'\`]`;
        const comparison = new RegExp(`(===|!==|==|!=)\\s*${literal}|${literal}\\s*(===|!==|==|!=)|case\\s+${literal}`);
        // The law's exported name constant used outside its file (imported to compare or switch on).
        const ownText = readFileSync(own, "utf8");
        const constant = /export const ([A-Z_]+) = ["']/.exec(ownText)?.[1];
        const constantComparison =
          constant && new RegExp(`(===|!==)\\s*${constant}\\b|\\b${constant}\\s*(===|!==)|case\\s+${constant}\\b`);
        if (comparison.test(text) || (constantComparison && constantComparison.test(text)))
          offences.push(`${relative(".", file)} compares '${law.name}'`);
      }
    }
    expect(offences).toEqual([]);
  });

  it("the offence check finds a comparison where there is one", () => {
    const name = LAWS[0].name;
    const literal = `["'\`]${escape(name)}["'\`]`;
    const comparison = new RegExp(`(===|!==|==|!=)\\s*${literal}|${literal}\\s*(===|!==|==|!=)|case\\s+${literal}`);
    expect(comparison.test(`if (result.law === "${name}") return;`)).toBe(true);
    expect(comparison.test(`switch (x) { case '${name}': }`)).toBe(true);
    expect(comparison.test(`laws: ["${name}"]`)).toBe(false);
  });

  it("names resolve loosely", () => {
    expect(lawByName("kv-conservation")?.name).toBe("KV conservation");
    expect(lawByName("page_size_invariance")?.name).toBe("page-size invariance");
    expect(lawByName("Retract/Resume invariance")?.name).toBe("retract/resume invariance");
    expect(lawByName("no such law")).toBeUndefined();
  });

  it("every law says what it needs consistently: a twin law describes its twin, internals only for engine state", () => {
    for (const law of LAWS) {
      expect(law.summary.length, law.name).toBeGreaterThan(10);
      if (law.needs.twin) expect(law.needs.twin.describe, law.name).toMatch(/^the /);
    }
  });

  it("combine adds counts and keeps the first failure, naming the second run", () => {
    const holds = { law: "x", status: "holds" as const, checked: 3, ties: 1 };
    const fails = { law: "x", status: "fails" as const, checked: 2, ties: 0, violation: { message: "boom" } };
    expect(combine(holds, fails, "target-only run")).toMatchObject({
      status: "fails",
      checked: 5,
      ties: 1,
      violation: { message: "target-only run: boom" },
    });
    expect(combine({ law: "x", status: "not-checkable", checked: 0, ties: 0 }, holds, "b")).toEqual(holds);
  });
});
