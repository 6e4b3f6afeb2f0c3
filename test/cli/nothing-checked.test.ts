// "Nothing checked" is never a pass: verdicts with no law holding (all not checkable, or none at all) are
// exit 1 with one line saying so; one law holding is enough.
import { describe, expect, it } from "vitest";
import { nothingChecked } from "../../src/cli/nothing-checked.ts";

describe("nothingChecked", () => {
  it("is exit 1 and one line when no verdict holds, 0 otherwise", () => {
    const lines: string[] = [];
    const stderr = { write: (text: string) => lines.push(text) };
    expect(nothingChecked("run", ["not-checkable", "not-checkable"], undefined, stderr)).toBe(1);
    expect(nothingChecked("check", [], "every case was skipped", stderr)).toBe(1);
    expect(lines).toEqual([
      "specconf run: nothing was checked (every law was not checkable): that is not a pass\n",
      "specconf check: nothing was checked (every case was skipped): that is not a pass\n",
    ]);
    expect(nothingChecked("run", ["not-checkable", "holds"], undefined, stderr)).toBe(0);
    expect(lines).toHaveLength(2);
  });
});
