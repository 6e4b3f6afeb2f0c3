// Every field of every published schema (schemas/*.json, emitted from the TypeBox definitions) carries a
// description (issue 27): a field added without one fails here, naming its file and JSON pointer.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { publishedSchemas } from "../../src/validate/published-schemas.ts";

/** JSON pointers of the properties under `node` without a description. */
function undescribed(node: unknown, pointer: string, out: string[]): string[] {
  if (Array.isArray(node)) node.forEach((item, i) => undescribed(item, `${pointer}/${i}`, out));
  if (typeof node !== "object" || node === null || Array.isArray(node)) return out;
  const properties = (node as { properties?: unknown }).properties;
  if (typeof properties === "object" && properties !== null) {
    for (const [name, schema] of Object.entries(properties)) {
      const description = (schema as { description?: unknown }).description;
      if (typeof description !== "string" || description.trim().length < 3) out.push(`${pointer}/properties/${name}`);
    }
  }
  for (const [key, value] of Object.entries(node)) undescribed(value, `${pointer}/${key}`, out);
  return out;
}

describe("published schemas", () => {
  const schemas = publishedSchemas();

  it("cover every file under schemas/", () => {
    expect([...schemas.keys()].sort()).toEqual(readdirSync("schemas").sort());
  });

  for (const [file, text] of schemas) {
    it(`${file}: every field has a description`, () => {
      expect(undescribed(JSON.parse(text), "", [])).toEqual([]);
    });
  }

  it("the check finds a field without one", () => {
    const schema = { properties: { a: { type: "integer", description: "an a" }, b: { properties: { c: {} } } } };
    expect(undescribed(schema, "", [])).toEqual(["/properties/b", "/properties/b/properties/c"]);
  });
});
