// Imports run one way (DEVELOPERS.md; issue 24): every folder of src/ sits on a layer of STRUCTURE.md's
// "Layers" list, no import runs up the list, and no two folders import each other (directly or around a
// loop). The list is read from STRUCTURE.md itself, so the document and the code cannot drift apart.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

interface SourceFile {
  /** Path under src/, e.g. "engine/run-case.ts". */
  path: string;
  /** Relative import specifiers as written. */
  imports: string[];
}

/** Folder -> layer number, from the numbered lines under "## Layers". */
function readLayers(markdown: string): Map<string, number> {
  const section = markdown.split(/^## Layers$/m)[1]?.split(/^## /m)[0] ?? "";
  const layers = new Map<string, number>();
  for (const match of section.matchAll(/^(\d+)\. (.*?) — /gm))
    for (const folder of match[2].matchAll(/`([a-z-]+)`/g)) layers.set(folder[1], Number(match[1]));
  return layers;
}

function sourceFiles(root: string, dir = root): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, path);
    if (!entry.name.endsWith(".ts")) return [];
    const text = readFileSync(path, "utf8");
    const imports = [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]);
    return [{ path: relative(root, path), imports }];
  });
}

const folderOf = (path: string) => (path.includes("/") ? path.split("/")[0] : undefined);

/** Upward imports, folders outside the list, and folder cycles: each as one line. */
export function layerOffences(files: readonly SourceFile[], layers: ReadonlyMap<string, number>): string[] {
  const offences: string[] = [];
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(file.path);
    if (from === undefined) continue; // src/index.ts: the public entry, on top of every layer
    if (!layers.has(from)) offences.push(`${file.path}: folder '${from}' is on no layer of STRUCTURE.md`);
    for (const specifier of file.imports) {
      const target = normalize(join(dirname(file.path), specifier));
      const to = folderOf(target);
      if (target.startsWith("..") || to === undefined) {
        offences.push(`${file.path} imports ${specifier}: outside src/ folders`);
        continue;
      }
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
      if ((layers.get(to) ?? Infinity) > (layers.get(from) ?? Infinity))
        offences.push(
          `${file.path} imports ${target}: '${from}' (layer ${layers.get(from)}) -> '${to}' (${layers.get(to)})`,
        );
    }
  }
  // Folder cycles (same-layer folders included): depth-first search for a back edge.
  const state = new Map<string, "open" | "done">();
  const visit = (folder: string, path: string[]): void => {
    state.set(folder, "open");
    for (const next of edges.get(folder) ?? []) {
      if (state.get(next) === "open") offences.push(`folder cycle: ${[...path, folder, next].join(" -> ")}`);
      else if (!state.has(next)) visit(next, [...path, folder]);
    }
    state.set(folder, "done");
  };
  for (const folder of [...edges.keys()].sort()) if (!state.has(folder)) visit(folder, []);
  return offences;
}

describe("layers", () => {
  const layers = readLayers(readFileSync("STRUCTURE.md", "utf8"));

  it("STRUCTURE.md lists the layers, one folder on one layer", () => {
    expect(layers.size).toBeGreaterThan(10);
    expect(layers.get("errors")).toBeLessThan(layers.get("cli")!);
  });

  it("no import in src/ runs up the layers, every folder is on one, and no folders import each other", () => {
    expect(layerOffences(sourceFiles("src"), layers)).toEqual([]);
  });

  it("the check finds an upward import, an unlisted folder and a cycle", () => {
    const small = new Map([
      ["low", 1],
      ["mid", 2],
      ["high", 3],
    ]);
    const files: SourceFile[] = [
      { path: "low/a.ts", imports: ["../high/b.ts"] },
      { path: "high/b.ts", imports: ["../low/a.ts", "./c.ts"] },
      { path: "mid/c.ts", imports: ["../low/a.ts"] },
      { path: "stray/d.ts", imports: [] },
    ];
    const offences = layerOffences(files, small);
    expect(offences.some((line) => line.startsWith("low/a.ts imports high/b.ts"))).toBe(true);
    expect(offences.some((line) => line.includes("'stray' is on no layer"))).toBe(true);
    expect(offences.some((line) => line.startsWith("folder cycle: "))).toBe(true);
    expect(layerOffences(files.slice(1, 3), small)).toEqual([]);
  });
});
