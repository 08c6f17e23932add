// What services/bundle.mjs changes in the services' bundles (services/bundle-plugins.mjs; docs/performance.md
// "Services bundled"): zod's error-message locales other than English left out (zodEnglishOnly), JSON files
// carried as JSON.parse of their text, not as object literals (jsonAsParse).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs build script, no type declarations
import { jsonAsParse, zodEnglishOnly } from "../../services/bundle-plugins.mjs";
import { ROOT, readText, SERVICES } from "./manifests.js";

const work = mkdtempSync(join(tmpdir(), "moniro-bundle-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Bundles `source` as services/bundle.mjs bundles a service (ESM for node, from the repository's node_modules). */
async function bundleAndRun(source: string, plugins: unknown[], name = `${plugins.length}`): Promise<string> {
  const entry = join(work, `entry-${name}.mjs`);
  const outfile = join(work, `out-${name}.mjs`);
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

/** Bundles `source` with `plugins` and returns the bundle's text. */
async function bundleText(source: string, plugins: unknown[], name: string): Promise<string> {
  const entry = join(work, `entry-${name}.mjs`);
  writeFileSync(entry, source);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    logLevel: "silent",
    // biome-ignore lint/suspicious/noExplicitAny: the plugin comes from an untyped .mjs
    plugins: plugins as any[],
  });
  return result.outputFiles[0]?.text ?? "";
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

  it("carry a JSON file as JSON.parse of its text, the same value under every import form", async () => {
    const data = { "a/b": { source: "iana", extensions: ["x", "y"] }, Ünïcode: "é → ✓", n: 1.5, none: null };
    writeFileSync(join(work, "data.json"), `${JSON.stringify(data, null, 2)}\n`);
    const probe = `import data, { n } from "./data.json"; const required = require("./data.json");
      console.log(JSON.stringify({ data, n, same: required === data }));`;
    const out = JSON.parse(await bundleAndRun(probe, [jsonAsParse()], "json"));
    expect(out).toEqual({ data, n: 1.5, same: true });
    expect(JSON.parse(await bundleAndRun(probe, [], "json-plain"))).toEqual(out);
    expect(await bundleText(probe, [jsonAsParse()], "json-text")).toContain(`JSON.parse(`);
    // Without the plugin esbuild writes an object literal (what the plugin replaces).
    expect(await bundleText(probe, [], "json-literal")).not.toContain("JSON.parse(");
  });

  it("are built with it: the gateway's bundle carries mime-db as JSON.parse of its text", () => {
    const bundle = readText("services/gateway/dist/main.js");
    expect(bundle).toMatch(/JSON\.parse\((['"`])\{"application\/1d-interleaved-parityfec"/);
  });

  it("leave no package to node's require at start but iconv-lite: ioredis, BullMQ and the OpenTelemetry API are inside", () => {
    for (const service of SERVICES) {
      const meta = JSON.parse(readText(`services/${service}/dist/main.meta.json`)) as {
        inputs: Record<string, unknown>;
        outputs: Record<string, { imports?: { path: string; external?: boolean }[] }>;
      };
      const loaded = Object.values(meta.outputs).flatMap((output) =>
        (output.imports ?? []).filter((entry) => entry.external && !isBuiltin(entry.path)).map((entry) => entry.path),
      );
      expect([...new Set(loaded)], service).toEqual(service === "gateway" ? ["iconv-lite"] : []);
      const inputs = Object.keys(meta.inputs);
      const bundled = (name: string) => inputs.some((input) => input.startsWith(`node_modules/${name}/`));
      if (service !== "signal-bridge") expect(bundled("ioredis"), service).toBe(true);
      expect(bundled("@opentelemetry/api"), service).toBe(true);
    }
    const scheduler = Object.keys(
      (JSON.parse(readText("services/scheduler/dist/main.meta.json")) as { inputs: Record<string, unknown> }).inputs,
    );
    expect(scheduler).toContain("node_modules/bullmq/dist/cjs/classes/worker.js");
    // The classes from their own files: not the package index, which loads the PostgreSQL backend.
    expect(scheduler).not.toContain("node_modules/bullmq/dist/cjs/index.js");
  });
});
