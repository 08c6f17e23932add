import { defineConfig } from "vitest/config";

// `source` resolves workspace packages to their TypeScript sources, so tests
// run without a build; the e2e tier starts built services (dist/).
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    // The JSON report gives .ci/run its closing 'N passed, N failed' line.
    reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["libs/*/src/**/*.test.ts", "services/*/src/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**", "**/dist/**"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["libs/*/src/**/*.int.test.ts", "services/*/src/**/*.int.test.ts"],
          exclude: ["**/node_modules/**", "**/dist/**"],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts"],
          // The CLI tests run the bundled binary: bundle it from the sources first.
          globalSetup: ["test/support/build-cli.ts"],
          exclude: ["**/node_modules/**", "**/dist/**"],
          testTimeout: 90_000,
          hookTimeout: 90_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
