#!/usr/bin/env node
/** Writes the NATS configuration files of the deployments, or with --check fails naming those out of date. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { natsConfigFiles } from "./nats-permissions.js";

const root = resolve(import.meta.dirname, "../../..");
const check = process.argv.includes("--check");
const stale: string[] = [];
for (const [path, text] of Object.entries(natsConfigFiles())) {
  const file = resolve(root, path);
  let current = "";
  try {
    current = readFileSync(file, "utf8");
  } catch {}
  if (current === text) continue;
  if (check) {
    stale.push(path);
    continue;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`${path} written`);
}
if (stale.length > 0) {
  console.error(`${stale.join(", ")} out of date: run 'npm run nats-config' and commit them.`);
  process.exit(1);
}
