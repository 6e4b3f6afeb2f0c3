// What an interrupt leaves on screen: the progress bar is cleared before the one-line message, and a
// command that has finished is not reported as interrupted.
import { describe, expect, it } from "vitest";
import { clearProgressBars, createProgress } from "../../src/cli/progress.ts";
import { commandLabel } from "../../src/cli/signals.ts";

describe("interrupts", () => {
  it("clearProgressBars clears every bar on screen, once", () => {
    const written: string[] = [];
    const stream = { isTTY: true, columns: 80, write: (text: string) => written.push(text) };
    const progress = createProgress({ label: "check", total: 10, stream });
    progress.update(3);
    expect(written.join("")).toContain("check [");
    written.length = 0;
    clearProgressBars();
    expect(written).toEqual(["\r\x1b[2K"]);
    clearProgressBars();
    progress.finish();
    expect(written).toEqual(["\r\x1b[2K"]);
  });

  it("names the command (and golden's subcommand) from argv alone", () => {
    expect(commandLabel(["run", "--steps", "2"])).toBe("run");
    expect(commandLabel(["golden", "update"])).toBe("golden update");
    expect(commandLabel(["--help"])).toBe("");
    expect(commandLabel([])).toBe("");
  });
});
