// schemas/*.schema.json are what the TypeBox definitions emit (run `npm run schemas` after changing a
// schema), and each is a working JSON Schema 2020-12 on its own: a fresh ajv compiles it and accepts
// the checked-in golden files, a reference trace, case and outputs line, and protocol messages.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { requestFor } from "../../src/adapter/client.ts";
import { publishedSchemas, SCHEMA_DIR } from "../../src/validate/published-schemas.ts";
import { golden, goldenCase, reference } from "../helpers/golden-runs.ts";

describe("published JSON Schemas", () => {
  const emitted = publishedSchemas();

  it("schemas/ holds exactly the emitted files, up to date (else: npm run schemas)", () => {
    expect(readdirSync(SCHEMA_DIR).sort()).toEqual([...emitted.keys()].sort());
    for (const [file, text] of emitted)
      expect(readFileSync(join(SCHEMA_DIR, file), "utf8"), `${file} is stale: run npm run schemas`).toBe(text);
  });

  it("each compiles alone and accepts real documents", async () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    const validator = (file: string) => ajv.compile(JSON.parse(readFileSync(join(SCHEMA_DIR, file), "utf8")));
    const goldenSchema = validator("golden.schema.json");
    for (const name of readdirSync("golden"))
      expect(
        goldenSchema(JSON.parse(readFileSync(join("golden", name), "utf8"))),
        JSON.stringify(goldenSchema.errors),
      ).toBe(true);
    const run = await reference("tiny-mirror", "tree");
    const traceSchema = validator("trace.schema.json");
    expect(traceSchema(run.trace), JSON.stringify(traceSchema.errors)).toBe(true);
    const outputsSchema = validator("outputs.schema.json");
    for (const line of run.lines) expect(outputsSchema(line)).toBe(true);
    expect(outputsSchema({ ...run.lines[0], formatVersion: 2 })).toBe(false);
    const caseSchema = validator("case.schema.json");
    expect(caseSchema(goldenCase("tiny-mirror", "tree").case)).toBe(true);
    const request = validator("adapter-request.schema.json");
    expect(request(requestFor(golden("tiny-eagle").cases[0].case, 1, true)), JSON.stringify(request.errors)).toBe(true);
    const response = validator("adapter-response.schema.json");
    expect(
      response({
        requestId: 1,
        outputs: run.lines.map(({ formatVersion: _, case: __, ...output }) => output),
        trace: run.trace,
      }),
    ).toBe(true);
    expect(response({ requestId: 1, error: "cannot", unsupported: true })).toBe(true);
    expect(response({ requestId: 1 })).toBe(false);
  });
});
