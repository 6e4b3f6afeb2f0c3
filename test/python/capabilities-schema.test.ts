// The Python package's capability names are the adapter schema's (src/adapter/protocol.ts), not a hand copy that
// can drift: every Capabilities field's wire name is a property of CapabilitiesSchema and back, the package's
// enumerations (modes, model formats, dtypes, model families) are the schema's literals, its protocol name and
// version are the TypeScript side's, and a Capabilities with every field set serializes to what the schema accepts.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CapabilitiesSchema, PROTOCOL, PROTOCOL_VERSION } from "../../src/adapter/protocol.ts";
import { validateAgainst } from "../../src/schema/validator.ts";

const DUMP = `
import dataclasses, json
from specconf_adapter import PROTOCOL, PROTOCOL_VERSION, capabilities as c

def every_field(field):
    """A valid value for each field, read from its annotation and name (no field left at None)."""
    enums = {"modes": c.MODES, "model_formats": c.MODEL_FORMATS, "dtypes": c.DTYPES, "model_families": c.MODEL_FAMILIES,
             "drafts": ("mirror",), "page_sizes": (1, 2), "sampling": ("temperature",), "observes": ("trace",)}
    if field.name in enums:
        return enums[field.name]
    return 4 if "int" in str(field.type) else True

names = [field.name for field in dataclasses.fields(c.Capabilities)]
full = c.Capabilities(**{field.name: every_field(field) for field in dataclasses.fields(c.Capabilities)})
print(json.dumps({"wire": [c._camel(name) for name in names], "modes": c.MODES, "modelFormats": c.MODEL_FORMATS,
                  "dtypes": c.DTYPES, "modelFamilies": c.MODEL_FAMILIES, "protocol": PROTOCOL,
                  "version": PROTOCOL_VERSION, "default": c.Capabilities().to_json(), "full": full.to_json()}))
`;

interface Dump {
  wire: string[];
  modes: string[];
  modelFormats: string[];
  dtypes: string[];
  modelFamilies: string[];
  protocol: string;
  version: number;
  default: unknown;
  full: Record<string, unknown>;
}

function dump(): Dump {
  const result = spawnSync("python3", ["-c", DUMP], {
    cwd: "python",
    encoding: "utf8",
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONPATH: "." },
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Dump;
}

/** The string literals an array property's items allow (a TypeBox union of literals). */
function literals(name: string): unknown[] {
  const items = (
    CapabilitiesSchema.properties as unknown as Record<string, { items: { anyOf?: { const: unknown }[] } }>
  )[name].items;
  expect(items.anyOf, `${name}: a union of literals`).toBeDefined();
  return items.anyOf!.map((member) => member.const);
}

describe("python/specconf_adapter capabilities against src/adapter/protocol.ts", () => {
  const python = dump();

  it("names every schema property, and nothing else", () => {
    expect([...python.wire].sort()).toEqual(Object.keys(CapabilitiesSchema.properties).sort());
    expect(new Set(python.wire).size).toBe(python.wire.length);
  });

  it("enumerates what the schema's literals allow, and speaks its protocol name and version", () => {
    for (const name of ["modes", "modelFormats", "dtypes", "modelFamilies"] as const)
      expect(python[name], name).toEqual(literals(name));
    expect(python.protocol).toBe(PROTOCOL);
    expect(python.version).toBe(PROTOCOL_VERSION);
  });

  it("serializes the default and a Capabilities with every field set to what the schema accepts", () => {
    expect(Object.keys(python.full).sort()).toEqual([...python.wire].sort());
    for (const value of [python.default, python.full]) {
      const result = validateAgainst(CapabilitiesSchema, value, "capabilities");
      expect(result.ok, JSON.stringify(result)).toBe(true);
    }
  });
});
