import { describe, expect, it } from "vitest";
import { defineFlags, parseFlags, renderHelp, UsageError } from "../../src/cli/args.ts";

const FLAGS = defineFlags({
  steps: { type: "integer", min: 1, default: 100, description: "decode steps per request" },
  seed: { type: "integer", description: "fast-check seed" },
  ep: { type: "choice", choices: ["cpu", "cuda"], default: "cpu", description: "execution provider" },
  dtype: { type: "choice", choices: ["float32", "float64"], description: "model dtype" },
  only: { type: "string", multiple: true, description: "run only these laws" },
  sizes: { type: "integer", multiple: true, min: 1, default: [1, 16], description: "page sizes" },
  out: { type: "string", valueName: "<dir>", description: "output directory" },
  verbose: { type: "boolean", short: "v", description: "log progress" },
});

function usageError(argv: string[]): UsageError {
  try {
    parseFlags(FLAGS, argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error(`expected a UsageError for ${argv.join(" ")}`);
}

describe("parseFlags", () => {
  it("applies defaults", () => {
    const { values, positionals, help } = parseFlags(FLAGS, []);
    expect(values).toEqual({
      steps: 100,
      seed: undefined,
      ep: "cpu",
      dtype: undefined,
      only: [],
      sizes: [1, 16],
      out: undefined,
      verbose: false,
    });
    expect(positionals).toEqual([]);
    expect(help).toBe(false);
  });

  it("parses typed values", () => {
    const { values } = parseFlags(FLAGS, [
      "--steps=7",
      "--seed",
      "-42",
      "--ep",
      "cuda",
      "--only",
      "lossless",
      "--only=positions",
      "--sizes",
      "4",
      "-v",
      "--out",
      "x",
    ]);
    const steps: number = values.steps;
    const seed: number | undefined = values.seed;
    const ep: "cpu" | "cuda" = values.ep;
    const dtype: "float32" | "float64" | undefined = values.dtype;
    const only: string[] = values.only;
    expect({ steps, seed, ep, dtype, only }).toEqual({
      steps: 7,
      seed: -42,
      ep: "cuda",
      dtype: undefined,
      only: ["lossless", "positions"],
    });
    expect(values.sizes).toEqual([4]);
    expect(values.verbose).toBe(true);
    expect(values.out).toBe("x");
  });

  it("rejects unknown flags", () => {
    const err = usageError(["--foo"]);
    expect(err.message).toBe("unknown flag --foo");
    expect(err.flag).toBe("--foo");
    expect(usageError(["--foo=1"]).message).toBe("unknown flag --foo");
    expect(usageError(["-x"]).message).toBe("unknown flag -x");
  });

  it("rejects bad integers, and reports integers outside the bounds as out of range", () => {
    for (const bad of ["x", "1.5", "", "1e3", "--3"]) {
      const err = usageError([`--steps=${bad}`]);
      expect(err.message).toBe(`--steps must be an integer >= 1, got '${bad}'`);
      expect(err.flag).toBe("--steps");
    }
    for (const [args, shown] of [
      [["--steps=0"], "0"],
      [["--steps", "-3"], "-3"],
      [["--steps=99999999999999999999"], "99999999999999999999"],
    ] as const) {
      const err = usageError([...args]);
      expect(err.message).toBe(`--steps ${shown} is out of range: must be an integer >= 1`);
      expect(err.flag).toBe("--steps");
    }
    expect(usageError(["--seed", "abc"]).message).toBe("--seed must be an integer, got 'abc'");
    expect(usageError(["--sizes", "2", "--sizes", "0"]).message).toBe(
      "--sizes 0 is out of range: must be an integer >= 1",
    );
  });

  it("rejects bad choices", () => {
    const err = usageError(["--ep", "tpu"]);
    expect(err.message).toBe("--ep must be one of cpu, cuda, got 'tpu'");
    expect(err.flag).toBe("--ep");
  });

  it("rejects missing values, values on booleans and positionals", () => {
    const missing = usageError(["--steps"]);
    expect(missing.message).toBe("missing value for --steps");
    expect(missing.flag).toBe("--steps");
    const ambiguous = usageError(["--out", "--verbose"]);
    expect(ambiguous.flag).toBe("--out");
    expect(ambiguous.message).toMatch(/^missing value for --out/);
    expect(ambiguous.message).not.toContain("\n");
    expect(usageError(["--verbose=yes"]).message).toBe("--verbose does not take a value");
    const positional = usageError(["stray"]);
    expect(positional.message).toBe("unexpected argument 'stray'");
    expect(positional.flag).toBeUndefined();
  });

  it("takes a negative number after a flag as its value (integer or not), never as a missing value", () => {
    const spec = defineFlags({
      offset: { type: "integer", short: "o", description: "offset" },
      name: { type: "string", description: "name" },
    });
    expect(parseFlags(spec, ["--offset", "-3"]).values.offset).toBe(-3);
    expect(parseFlags(spec, ["-o", "-4"]).values.offset).toBe(-4);
    expect(parseFlags(spec, ["--name", "-3"]).values.name).toBe("-3");
    expect(parseFlags(spec, ["--name", "-0.5"]).values.name).toBe("-0.5");
    expect(() => parseFlags(spec, ["--name", "-x"])).toThrow(UsageError);
    expect(() => parseFlags(spec, ["--", "--offset", "-3"], { allowPositionals: true })).not.toThrow();
  });

  it("accepts positionals when allowed, and --help / -h", () => {
    const parsed = parseFlags(FLAGS, ["a", "--steps", "3", "b"], { allowPositionals: true });
    expect(parsed.positionals).toEqual(["a", "b"]);
    expect(parsed.values.steps).toBe(3);
    expect(parseFlags(FLAGS, ["--help"]).help).toBe(true);
    expect(parseFlags(FLAGS, ["-h"]).help).toBe(true);
  });

  it("rejects inconsistent specs as programming errors", () => {
    expect(() => parseFlags({ ep: { type: "choice", choices: ["a"], default: "b", description: "" } }, [])).toThrow(
      /not one of its choices/,
    );
    expect(() => parseFlags({ n: { type: "integer", min: 1, default: 0, description: "" } }, [])).toThrow(Error);
  });
});

describe("renderHelp", () => {
  it("lists every flag with its value, notes and description", () => {
    const text = renderHelp(FLAGS, { usage: "specconf run [flags]", summary: "Run the laws." });
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("usage: specconf run [flags]");
    expect(text).toContain("Run the laws.");
    expect(text).toMatch(/--steps <n>\s+decode steps per request \(an integer >= 1; default: 100\)/);
    expect(text).toMatch(/--ep <cpu\|cuda>\s+execution provider \(default: cpu\)/);
    expect(text).toMatch(/--only <value>\s+run only these laws \(repeatable\)/);
    expect(text).toMatch(/--sizes <n>\s+page sizes \(an integer >= 1; repeatable; default: 1, 16\)/);
    expect(text).toMatch(/--out <dir>\s+output directory$/m);
    expect(text).toMatch(/-v, --verbose\s+log progress$/m);
    expect(text).toMatch(/-h, --help\s+show this help$/m);
    // descriptions start in one column
    const descriptions = [...Object.values(FLAGS).map((f) => f.description), "show this help"];
    const columns = new Set(descriptions.map((d) => lines.find((l) => l.includes(d))!.indexOf(d)));
    expect(columns.size).toBe(1);
  });
});
