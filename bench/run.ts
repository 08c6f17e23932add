import { readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { markdown, reportedTables } from "./support/report.js";

/**
 * `npm run bench [-- <name>...]`: runs every benchmark module of bench/
 * (`*.bench.ts`, and the tool-executor's `tool-executor*.ts`), or only those
 * whose name contains one of the given words. Each module exports `run()`.
 * Figures are printed, never asserted: the exit code only says whether every
 * benchmark ran.
 */
const here = dirname(fileURLToPath(import.meta.url));
const ORDER = [
  "loop-overhead",
  "injection",
  "wake",
  "signal",
  "wakeup",
  "throughput",
  "cluster-throughput",
  "idle-memory",
  "services",
  "sandbox-exec",
  "webhook",
  "subagent",
  "llm-cost",
  "workspace-channel",
  "prompt-assembly",
  "registry",
  "cli-list",
  "workflow-start",
  "mention-wake",
  "mention-fanout",
  "channel-throughput",
];

function moduleName(file: string): string {
  return file.replace(/\.js$/, "").replace(/\.bench$/, "");
}

const modules = readdirSync(here)
  .filter((file) => file.endsWith(".bench.js") || /^tool-executor.*\.js$/.test(file))
  .map((file) => ({ name: moduleName(file), file }))
  .sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));

function rank(name: string): number {
  const index = ORDER.indexOf(name);
  return index === -1 ? ORDER.length : index;
}

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith("-"));
/** `--markdown=<file>`: also write the tables as Markdown (how docs/performance.md gets its figures). */
const markdownFile = process.argv.find((arg) => arg.startsWith("--markdown="))?.slice("--markdown=".length);
const selected = wanted.length === 0 ? modules : modules.filter((m) => wanted.some((word) => m.name.includes(word)));
if (selected.length === 0) {
  process.stderr.write(
    `no benchmark matches ${wanted.map((w) => `'${w}'`).join(", ")}; known: ${modules.map((m) => m.name).join(", ")}\n`,
  );
  process.exit(2);
}

const started = performance.now();
process.stdout.write(
  `moniro benchmarks: ${selected.map((m) => m.name).join(", ")}\nnode ${process.version}, ${new Date().toISOString()}\n`,
);
const failed: string[] = [];
const skipped: string[] = [];
for (const { name, file } of selected) {
  const module = (await import(pathToFileURL(join(here, file)).href)) as Record<string, unknown>;
  // `run()` (or a default export); else the one exported function whose name starts with "run".
  const runners = Object.entries(module).filter(([key, value]) => /^run/.test(key) && typeof value === "function");
  const entry = module.run ?? module.default ?? (runners.length === 1 ? runners[0]?.[1] : undefined);
  if (typeof entry !== "function") {
    process.stderr.write(
      `${file}: exports no run() function (found: ${Object.keys(module).join(", ") || "nothing"}); skipped\n`,
    );
    skipped.push(name);
    continue;
  }
  const t0 = performance.now();
  try {
    await (entry as () => Promise<unknown>)();
  } catch (error) {
    failed.push(name);
    process.stderr.write(`\n${name} failed: ${(error as Error)?.stack ?? String(error)}\n`);
  }
  process.stdout.write(`  (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
}

const tables = reportedTables();
const missed = tables.flatMap((table) =>
  table.rows.filter((row) => row.met === false).map((row) => `${table.benchmark}: ${row.metric}`),
);
process.stdout.write(
  `\n${selected.length - failed.length - skipped.length}/${selected.length} benchmarks ran in ${((performance.now() - started) / 1000).toFixed(0)} s` +
    `${failed.length ? `; failed: ${failed.join(", ")}` : ""}${skipped.length ? `; skipped: ${skipped.join(", ")}` : ""}\n` +
    `goals missed (information only): ${missed.length ? missed.join("; ") : "none"}\n`,
);
if (markdownFile) writeFileSync(markdownFile, markdown());
process.exit(failed.length > 0 ? 1 : 0);
