#!/usr/bin/env node
/** Writes docs/openapi.json, or with --check fails naming what differs when it is out of date. */
import { readFileSync, writeFileSync } from "node:fs";
import { describeDifference } from "./document-diff.js";
import { openApiJson } from "./index.js";

const [path = "docs/openapi.json", flag] = process.argv.slice(2);
const text = openApiJson();
let current = "";
try {
  current = readFileSync(path, "utf8");
} catch {}
if (current === text) {
  console.log(`${path} is current`);
} else if (flag === "--check") {
  console.error(`${path} is out of date (${describeDifference(current, text)}). Run 'npm run openapi' and commit it.`);
  process.exit(1);
} else {
  writeFileSync(path, text);
  console.log(`${path} written`);
}
