#!/usr/bin/env node
/** Writes docs/schemas/*.json, or with --check fails when they are out of date. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderJsonSchemas } from "./json-schemas.js";

const [dir = "docs/schemas", flag] = process.argv.slice(2);
const check = flag === "--check";
const stale: string[] = [];
mkdirSync(dir, { recursive: true });
for (const [file, text] of Object.entries(renderJsonSchemas())) {
  const path = join(dir, file);
  let current = "";
  try {
    current = readFileSync(path, "utf8");
  } catch {}
  if (current === text) continue;
  if (check) stale.push(path);
  else writeFileSync(path, text);
}
if (stale.length > 0) {
  console.error(`JSON Schemas out of date: ${stale.join(", ")}. Run 'npm run schemas' and commit the result.`);
  process.exit(1);
}
console.log(check ? "JSON Schemas are current" : `JSON Schemas written to ${dir}`);
