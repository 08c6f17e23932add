// esbuild plugins of services/bundle.mjs that change what a bundle contains (test/deploy/service-bundles.test.ts).
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ENGLISH_ONLY = join(dirname(fileURLToPath(import.meta.url)), "zod-locales-en.mjs");

/**
 * zod's `locales` namespace (`z.locales`, `z.core.locales`) with English only. zod's index re-exports its ~50
 * error-message locales, so every service's bundle carried ~257 KiB of them (30 % of the signal-bridge's): text
 * V8 keeps in the heap and pre-parses at every start. No Moniro code selects a locale; English, zod's default,
 * stays (`z.locales.en`); `z.config(z.locales.fr())` would find no `fr` in a bundled service.
 */
export function zodEnglishOnly() {
  return {
    name: "zod-english-only",
    setup(build) {
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
        /[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)
          ? { path: ENGLISH_ONLY }
          : undefined,
      );
    },
  };
}

/**
 * A bundled JSON file as `module.exports = JSON.parse("…")` instead of esbuild's object literal. V8 parses a large
 * literal into an AST in malloc'd zone memory that the allocator keeps after the compile; JSON.parse builds the same
 * value without it. The gateway's mime-db (150 KB, through express's mime-types): +2.2 MiB of RSS and ~4 ms of CPU
 * at its first require as a literal, measured in an empty node. Same value, same import forms (default and named).
 */
export function jsonAsParse() {
  return {
    name: "json-as-parse",
    setup(build) {
      build.onLoad({ filter: /\.json$/ }, async (args) => {
        const text = await readFile(args.path, "utf8");
        // Parsed here once, so a malformed file fails the build as esbuild's json loader would; stringified again
        // without whitespace.
        const value = JSON.stringify(JSON.parse(text));
        return { contents: `module.exports = JSON.parse(${JSON.stringify(value)});`, loader: "js" };
      });
    },
  };
}
