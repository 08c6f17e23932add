// Bundles the `moniro` CLI with esbuild into libs/cli/dist/moniro.js (the
// `bin`) plus a few `moniro-*.js` chunks beside it, loaded only by the
// commands that need them (`up`/`demo`'s stack, `apply`, `agent create`: their
// `import()`s). It reads the TypeScript sources (the workspace packages'
// `source` export condition), so it never packs a stale tsc output.
//
// Why: node spent most of a short command's time resolving, reading and
// compiling ~170 modules (95 of them zod's). docs/performance.md has the
// figures (bench/cli-list.bench.ts).
//
// The chunks sit in the entry's directory on purpose: code that finds files
// relative to itself (import.meta.dirname in program.ts, cli-options.ts) sees
// libs/cli/dist, as with tsc's output.
//
// Usage: `npm run build:cli` (part of `npm run build`); `--check` exits 1 when
// the bundle is missing or older than one of the files it was built from.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { bundleStaleness } from "./bundle-staleness.mjs";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = join(CLI, "..", "..");
const OUT = join(CLI, "dist");
const ENTRY = join(OUT, "moniro.js");
/** esbuild's list of the bundle's inputs (for --check). */
const META = join(OUT, "moniro.meta.json");
/** What this script writes into dist/ besides tsc's files. */
const OWN_FILE = /^moniro(-[\w-]+)?\.js(\.map)?$|^moniro\.meta\.json$/;

/** The first reason the bundle needs building again, or undefined when it is current. */
function staleness() {
  return bundleStaleness({ entry: ENTRY, meta: META, root: ROOT, rebuild: "npm run build:cli" });
}

if (process.argv.includes("--check")) {
  const reason = staleness();
  if (reason) console.error(reason);
  process.exit(reason ? 1 : 0);
}

mkdirSync(OUT, { recursive: true });
for (const file of readdirSync(OUT, { withFileTypes: true })) {
  if (file.isFile() && OWN_FILE.test(file.name)) rmSync(join(OUT, file.name));
}
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { moniro: join(CLI, "src", "main.ts") },
  outdir: OUT,
  chunkNames: "moniro-[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  conditions: ["source"],
  minify: true,
  // For `node --enable-source-maps libs/cli/dist/moniro.js …` with MONIRO_DEBUG=1.
  sourcemap: "linked",
  sourcesContent: false,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  // The CommonJS dependencies (commander, yaml) require() node builtins.
  banner: {
    js: 'import { createRequire as __moniroRequire } from "node:module"; const require = __moniroRequire(import.meta.url);',
  },
});
writeFileSync(META, JSON.stringify(result.metafile));
