// A screenshot of an HTML report in headless Chromium (docs/report.md's pictures):
//   npx tsx scripts/report-screenshot.ts REPORT.html OUT.png [WIDTH]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { launchChromium } from "../test/helpers/chromium.ts";

const [file, out, width] = process.argv.slice(2);
if (!file || !out) {
  process.stderr.write("usage: npx tsx scripts/report-screenshot.ts REPORT.html OUT.png [WIDTH]\n");
  process.exit(2);
}
const { context, close } = await launchChromium({ width: Number(width ?? 1400), height: 900 });
try {
  const page = await context.newPage();
  await page.goto(pathToFileURL(resolve(file)).href);
  await page.screenshot({ path: out, fullPage: true });
} finally {
  await close();
}
process.stdout.write(`${out}\n`);
