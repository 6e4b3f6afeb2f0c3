// Headless Chromium from Debian's package (/usr/bin/chromium; .ci/run installs it when missing), driven by
// playwright-core (no browser download). Launch flags: no sandbox (CI runs as root), no GPU, and nothing that
// reaches the network on its own (component updates, background networking, sync, QUIC); a fresh profile
// (playwright passes it as --user-data-dir through launchPersistentContext, the one way it accepts one).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = process.env.SPECCONF_CHROMIUM ?? "/usr/bin/chromium";

export async function launchChromium(
  viewport = { width: 1400, height: 900 },
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "specconf-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
