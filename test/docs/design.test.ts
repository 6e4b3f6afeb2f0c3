// The contract lives in the repository (issue 27): README and docs/ never point outside it, and docs/design.md
// names every fault and every law the code has, so a fault or law added without its contract line fails here.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FAULT_NAMES } from "../../src/case/faults.ts";
import { LAWS } from "../../src/laws/registry.ts";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const design = readFileSync("docs/design.md", "utf8");

describe("the contract in the repository", () => {
  it("README.md and docs/ link nothing outside the repository (no ../shared)", () => {
    const offenders = ["README.md", ...filesUnder("docs")].filter((path) =>
      /\.\.\/shared/.test(readFileSync(path, "utf8")),
    );
    expect(offenders).toEqual([]);
  });

  it("README links docs/design.md as the contract", () => {
    expect(readFileSync("README.md", "utf8")).toMatch(/\(docs\/design\.md\)/);
  });

  it("docs/design.md names every fault of src/case/faults.ts and says how many there are", () => {
    expect(FAULT_NAMES.filter((fault) => !design.includes(`\`${fault}\``))).toEqual([]);
    expect(design).toContain(`The ${FAULT_NAMES.length} faults`);
  });

  it("docs/design.md names every law of the registry and says how many there are", () => {
    const prose = design.replace(/\s+/g, " ");
    expect(LAWS.map((law) => law.name).filter((name) => !prose.includes(name))).toEqual([]);
    expect(design).toContain(`(${LAWS.length} today)`);
  });

  it("docs/tracing.md has a row for every law: the fields it reads", () => {
    const rows = new Set(
      readFileSync("docs/tracing.md", "utf8")
        .split("\n")
        .filter((line) => line.startsWith("| "))
        .map((line) => line.split("|")[1].trim()),
    );
    expect(LAWS.map((law) => law.name).filter((name) => !rows.has(name))).toEqual([]);
  });
});
