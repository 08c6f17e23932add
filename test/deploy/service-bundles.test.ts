// What services/bundle.mjs leaves out of the services' bundles: zod's error-message locales other than English
// (zodEnglishOnly, services/bundle-plugins.mjs; docs/performance.md "Services bundled").
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs build script, no type declarations
import { zodEnglishOnly } from "../../services/bundle-plugins.mjs";
import { ROOT, readText, SERVICES } from "./manifests.js";

const work = mkdtempSync(join(tmpdir(), "moniro-bundle-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Bundles `source` as services/bundle.mjs bundles a service (ESM for node, from the repository's node_modules). */
async function bundleAndRun(source: string, plugins: unknown[]): Promise<string> {
  const entry = join(work, `entry-${plugins.length}.mjs`);
  const outfile = join(work, `out-${plugins.length}.mjs`);
  writeFileSync(entry, source);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    nodePaths: [join(ROOT, "node_modules")],
    logLevel: "silent",
    // biome-ignore lint/suspicious/noExplicitAny: the plugin comes from an untyped .mjs
    plugins: plugins as any[],
  });
  const run = spawnSync(process.execPath, [outfile], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  return run.stdout.trim();
}

const ZOD_PROBE = `
import { z } from "zod";
const result = z.object({ name: z.string() }).safeParse({ name: 1 });
console.log(JSON.stringify({ locales: Object.keys(z.locales), coreLocales: Object.keys(z.core.locales), message: result.error.issues[0].message }));
`;

describe("the services' bundles", () => {
  it("carry zod's English messages and no other locale", async () => {
    const bundled = JSON.parse(await bundleAndRun(ZOD_PROBE, [zodEnglishOnly()]));
    expect(bundled).toEqual({
      locales: ["en"],
      coreLocales: ["en"],
      message: "Invalid input: expected string, received number",
    });
    // Without the plugin zod brings every locale (this is what the plugin removes).
    const plain = JSON.parse(await bundleAndRun(ZOD_PROBE, []));
    expect(plain.locales.length).toBeGreaterThan(20);
    expect(plain.message).toBe(bundled.message);
  });

  it("are built with it: no service's bundle holds a zod locale besides en", () => {
    for (const service of SERVICES) {
      const meta = JSON.parse(readText(`services/${service}/dist/main.meta.json`)) as {
        inputs: Record<string, unknown>;
      };
      const locales = Object.keys(meta.inputs).filter((input) => input.includes("node_modules/zod/v4/locales/"));
      expect(locales, service).toEqual(["node_modules/zod/v4/locales/en.js"]);
    }
  });
});
