// esbuild plugins of services/bundle.mjs that change what a bundle contains (test/deploy/service-bundles.test.ts).
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
