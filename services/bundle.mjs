// Bundles each service with esbuild into services/<service>/dist/main.js (one
// minified file, plus a chunk per lazily imported module beside it, and a
// linked source map), replacing tsc's entry point of the same name: every way
// of starting a service (the Dockerfile's CMD, compose, the Helm chart, k8s/,
// `moniro up`, test/support/stack.ts, the benchmarks) keeps running
// `node services/<service>/dist/main.js`.
//
// Why: node resolved, read and compiled 350-900 modules per service, and each
// module's source stays in the V8 heap as a string (two bytes per character
// when a comment holds one non-Latin-1 character). One minified Latin-1 file
// cuts each service's start-up CPU by a quarter to a half and lowers its
// settled RSS
// (docs/performance.md, "Services bundled").
//
// It reads the TypeScript sources (the workspace packages' `source` export
// condition), so it never packs a stale tsc output. Code that finds files
// relative to itself (import.meta.url, __dirname, __filename: libs/store's
// Lua scripts, createRequire) still sees its own source file's location.
// Third-party packages are bundled too (see EXTERNAL for the one left out
// and why); the OpenTelemetry SDK, loaded by a createRequire only when a
// service exports spans, is not part of the bundle.
// zod's error-message locales other than English are left out (zodEnglishOnly,
// services/bundle-plugins.mjs): ~257 KiB of text per service that no service used.
// JSON files go in as JSON.parse of their text (jsonAsParse): V8 compiles a large
// object literal with ~2 MiB of malloc'd memory that the process keeps.
//
// Usage: `node services/bundle.mjs` (part of `npm run build`); `--check`
// exits 1 with the reason when a service's bundle is missing or older than one
// of the files it was built from (test/support/stack.ts and the benchmarks run
// it before starting services).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleStaleness } from "../libs/cli/scripts/bundle-staleness.mjs";
import { jsonAsParse, zodEnglishOnly } from "./bundle-plugins.mjs";

const SERVICES_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = join(SERVICES_DIR, "..");
const SERVICES = ["agent-runner", "tool-executor", "scheduler", "signal-bridge", "gateway"];
/**
 * Left to node's require at run time: only iconv-lite (the gateway's body parsers), whose ~480 KiB
 * of code-page tables load only for a body in another charset than UTF-8; bundled, they would sit in
 * the bundle's source text, in the heap, for the process's life. Everything a service imports
 * statically is bundled, ioredis, BullMQ's classes (bullmq-classes.ts) and the OpenTelemetry API
 * included: a package node loads from node_modules at run time costs far more than its bundled
 * code (2026-11-27, a process settled 15 s after start: ioredis +6.5 MiB loaded, +0.7 bundled; the
 * OpenTelemetry API +4.8 against +0.3), and the five services settled at 308–309 MiB bundled whole
 * against 315–322 with those three left out (docs/performance.md, "Services bundled"). The
 * OpenTelemetry SDK is still required at run time, only when a service exports spans
 * (libs/telemetry/src/sdk-provider.ts); it brings its own copy of the API, which shares the bundled
 * one's global registry (the API keeps its tracer provider and context manager on `globalThis`).
 */
const EXTERNAL = ["iconv-lite"];
/** What this script writes into dist/ besides tsc's files (tsc's main.js and main.js.map are overwritten). */
const OWN_FILE = /^(bundle-[\w-]+\.js(\.map)?|main\.meta\.json)$/;

/** `MONIRO_BUNDLE_MINIFY=0 node services/bundle.mjs`: an unminified bundle that keeps names, for profiling. */
const PROFILING_BUILD = process.env.MONIRO_BUNDLE_MINIFY === "0";
const outDir = (service) => join(SERVICES_DIR, service, "dist");
const metaFile = (service) => join(outDir(service), "main.meta.json");

/** The first reason the service's bundle needs building again, or undefined when it is current. */
function staleness(service) {
  return bundleStaleness({
    entry: join(outDir(service), "main.js"),
    meta: metaFile(service),
    root: ROOT,
    rebuild: "npm run build",
  });
}

if (process.argv.includes("--check")) {
  const reasons = SERVICES.map(staleness).filter((reason) => reason !== undefined);
  for (const reason of reasons) console.error(reason);
  process.exit(reasons.length > 0 ? 1 : 0);
}

const LOCATION = /\bimport\.meta\.(url|dirname|filename)\b|\b__dirname\b|\b__filename\b/;

/**
 * import.meta.url/dirname/filename, __dirname and __filename of every bundled
 * file, as they were in that file: computed at run time from the bundle's own
 * location and the file's path relative to it. Declared on the file's first
 * line, so the source map's lines stay right.
 */
function ownLocations(dir) {
  return {
    name: "own-locations",
    setup(build) {
      build.onLoad({ filter: /\.(ts|mts|js|mjs|cjs)$/ }, async (args) => {
        const text = await readFile(args.path, "utf8");
        if (!LOCATION.test(text)) return undefined;
        const path = relative(dir, args.path).split(sep).join("/");
        const prefix =
          `;var __moniroFileUrl = __moniroLocation(${JSON.stringify(path)}), ` +
          "__moniroFilename = __moniroUrl.fileURLToPath(__moniroFileUrl), __moniroDirname = __moniroDirnameOf(__moniroFilename); ";
        const contents = text
          .replace(/\bimport\.meta\.url\b/g, "__moniroFileUrl")
          .replace(/\bimport\.meta\.filename\b/g, "__moniroFilename")
          .replace(/\bimport\.meta\.dirname\b/g, "__moniroDirname")
          .replace(/\b__dirname\b/g, "__moniroDirname")
          .replace(/\b__filename\b/g, "__moniroFilename");
        const loader = [".ts", ".mts"].includes(extname(args.path)) ? "ts" : "js";
        // After a hashbang and a "use strict" directive, which must stay first.
        const head =
          /^(#![^\n]*\n)?(\s*(\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)\s*)*(["']use strict["'];?)?/.exec(contents)?.[0] ?? "";
        return { contents: head + prefix + contents.slice(head.length), loader, resolveDir: dirname(args.path) };
      });
    },
  };
}

const { build } = await import("esbuild");
for (const service of SERVICES) {
  const dir = outDir(service);
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(dir, { withFileTypes: true })) {
    if (file.isFile() && OWN_FILE.test(file.name)) rmSync(join(dir, file.name));
  }
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: join(SERVICES_DIR, service, "src", "main.ts") },
    outdir: dir,
    chunkNames: "bundle-[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["source"],
    external: EXTERNAL,
    // MONIRO_BUNDLE_MINIFY=0 keeps whitespace and every function's name: for CPU profiles that name
    // functions (docs/performance.md, "How to reproduce"); `npm run build` ships the minified form.
    minify: !PROFILING_BUILD,
    keepNames: PROFILING_BUILD,
    // `node --enable-source-maps services/<service>/dist/main.js` gives stack traces in the TypeScript sources.
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    plugins: [zodEnglishOnly(), jsonAsParse(), ownLocations(dir)],
    // The CommonJS dependencies require() node builtins; ownLocations' declarations use the other three.
    banner: {
      js: [
        'import { createRequire as __moniroRequire } from "node:module";',
        'import * as __moniroUrl from "node:url";',
        'import { dirname as __moniroDirnameOf } from "node:path";',
        "const require = __moniroRequire(import.meta.url);",
        "const __moniroLocation = (path) => new URL(path, import.meta.url).href;",
      ].join(" "),
    },
  });
  writeFileSync(metaFile(service), JSON.stringify(result.metafile));
}
