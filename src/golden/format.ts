// The exact text of a golden file: 2-space indentation, keys in construction order (the generator
// builds every object in one fixed order), arrays of numbers on one line so diffs stay readable, a
// trailing newline. Non-finite numbers are refused (JSON would write null).
export function goldenText(value: unknown): string {
  return `${format(value, "")}\n`;
}

function format(value: unknown, indent: string): string {
  if (typeof value === "number" && !Number.isFinite(value))
    throw new TypeError(`cannot write ${value} in a golden file`);
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`cannot write ${typeof value} in a golden file`);
    return text;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((item) => item === null || typeof item !== "object"))
      return `[${value.map((item) => format(item, inner)).join(", ")}]`;
    return `[\n${value.map((item) => `${inner}${format(item, inner)}`).join(",\n")}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${format(item, inner)}`).join(",\n")}\n${indent}}`;
}
