// Every command's --help (and `specconf help`) fits a 100-column terminal, and what the help lists agrees
// with the README: run's presets are the README's presets. `specconf help <command>` is that command's --help,
// and `specconf --version` prints package.json's version (issue 36).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMMANDS, main, usage } from "../../src/cli/main.ts";
import { HELP_WIDTH } from "../../src/cli/args.ts";
import { presetNames } from "../../src/model/presets.ts";
import { capture } from "../helpers/capture.ts";

const HELPS: [string, string[]][] = [
  ...Object.keys(COMMANDS)
    .filter((name) => name !== "golden")
    .map((name): [string, string[]] => [name, ["--help"]]),
  ["golden", ["--help"]],
  ["golden", ["update", "--help"]],
  ["golden", ["verify", "--help"]],
  ["golden", ["dump", "--help"]],
];

describe("--help", () => {
  for (const [name, argv] of HELPS)
    it(`specconf ${name} ${argv.join(" ")} fits ${HELP_WIDTH} columns`, async () => {
      const { code, stdout, stderr } = await capture(() => COMMANDS[name].run(argv));
      expect(code, stderr).toBe(0);
      expect(stdout.length).toBeGreaterThan(0);
      const long = stdout.split("\n").filter((line) => line.length > HELP_WIDTH);
      expect(long, long.join("\n")).toEqual([]);
    });

  it(`specconf help fits ${HELP_WIDTH} columns`, () => {
    const long = usage()
      .split("\n")
      .filter((line) => line.length > HELP_WIDTH);
    expect(long).toEqual([]);
  });

  it("run --help lists the presets the README lists", async () => {
    const readme = readFileSync("README.md", "utf8");
    const row = readme.split("\n").find((line) => line.startsWith("| `--preset` |"));
    expect(row, "README has a --preset row").toBeDefined();
    const inReadme = [...row!.split("|")[2].matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    expect(inReadme).toEqual(presetNames());
    const { stdout } = await capture(() => COMMANDS.run.run(["--help"]));
    const helpText = stdout.replace(/\s+/g, " ");
    expect(helpText).toContain(`one of: ${presetNames().join(", ")}`);
  });
});

describe("help <command> and --version", () => {
  for (const [name, argv] of HELPS)
    it(`specconf help ${name} ${argv.slice(0, -1).join(" ")}is specconf ${name} ${argv.join(" ")}`, async () => {
      const direct = await capture(() => COMMANDS[name].run(argv));
      const viaHelp = await capture(() => main(["help", name, ...argv.slice(0, -1)]));
      expect(viaHelp).toEqual(direct);
    });

  it("help of an unknown command is exit 2 with one line naming it", async () => {
    const { code, stdout, stderr } = await capture(() => main(["help", "chek"]));
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^specconf: unknown command 'chek' \(try: run, [^\n]*\)\n$/);
  });

  it("--version prints package.json's version", async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    const { code, stdout } = await capture(() => main(["--version"]));
    expect(code).toBe(0);
    expect(stdout).toBe(`specconf ${pkg.version}\n`);
  });
});
