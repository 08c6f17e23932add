import { execFileSync } from "node:child_process";
import { join } from "node:path";

const BUNDLE = join(import.meta.dirname, "..", "..", "libs", "cli", "scripts", "bundle.mjs");

/**
 * Vitest global setup of the e2e tier: the tests that run the `moniro` binary
 * run libs/cli/dist/moniro.js, the esbuild bundle (`npm run build:cli`). It is
 * built again here when it is missing or older than a source it was built
 * from (well under a second), so a test never runs a stale bundle; when it is
 * current it is left alone (another test run may be using it). The services'
 * dist/ still comes from `npx tsc --build`.
 */
export default function setup(): void {
  try {
    execFileSync(process.execPath, [BUNDLE, "--check"], { stdio: "ignore" });
  } catch {
    execFileSync(process.execPath, [BUNDLE], { stdio: "inherit" });
  }
}
