import { execFileSync } from "node:child_process";
import { join } from "node:path";

/**
 * Vitest global setup of the e2e tier: bundles the CLI (libs/cli/dist/moniro.js,
 * `npm run build:cli`) so the tests that run the `moniro` binary never run a
 * bundle older than the sources (esbuild takes well under a second). The
 * services' dist/ still comes from `npx tsc --build`.
 */
export default function setup(): void {
  execFileSync(process.execPath, [join(import.meta.dirname, "..", "..", "libs", "cli", "scripts", "bundle.mjs")], {
    stdio: "inherit",
  });
}
