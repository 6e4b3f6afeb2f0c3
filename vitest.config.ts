import { configDefaults, defineConfig } from "vitest/config";

// "specconf" (the package's own name, test/index.test.ts) resolves to src/index.ts through package.json's
// "specconf-source" export condition, never to a dist/ an earlier `npm pack` left behind.
const conditions = ["specconf-source", "module", "node", "development|production"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    setupFiles: ["test/setup.ts"],
    testTimeout: 60_000,
    // Hooks start engines and servers (process starts, model exports): the tests' limit, not vitest's 10 s.
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/properties/laws/**"],
        },
      },
      // The law property suites share one module graph per worker (engine, ONNX Runtime, fast-check are
      // imported once, not once per law file); every random choice is seeded, so isolation buys nothing.
      { extends: true, test: { name: "laws", include: ["test/properties/laws/**/*.test.ts"], isolate: false } },
    ],
  },
});
