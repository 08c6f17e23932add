import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_LLM_TIMEOUT_MS } from "@moniro/llm";
import { describe, expect, it } from "vitest";
import { ROOT, SERVICES } from "../deploy/manifests.js";
import { CONFIG_LOADERS, envNamesKnownTo, loadConfigOf, type Service } from "../deploy/service-env.js";

// Issue 13, "Docs": docs/configuration.md lists every MONIRO_* variable the
// services' configuration schemas read, each with the default the code
// applies, and lists no variable that no code reads.

interface Row {
  section: string;
  defaultCell: string;
}

const TEXT = readFileSync(join(ROOT, "docs", "configuration.md"), "utf8");

/** The variable tables of docs/configuration.md: variable → its rows (a variable may have one per service). */
function documented(): Map<string, Row[]> {
  const rows = new Map<string, Row[]>();
  let section = "";
  for (const line of TEXT.split("\n")) {
    const heading = /^#{2,3} (.+)$/.exec(line);
    if (heading) section = heading[1] as string;
    const cells = line.startsWith("| `") ? line.split("|").map((cell) => cell.trim()) : [];
    if (cells.length < 4) continue;
    for (const name of (cells[1] as string).matchAll(/`((?:MONIRO|OTEL|ANTHROPIC)_[A-Z0-9_]+)`/g)) {
      rows.set(name[1] as string, [
        ...(rows.get(name[1] as string) ?? []),
        { section, defaultCell: cells[2] as string },
      ]);
    }
  }
  return rows;
}

/** The sections of configuration.md that hold a service's variables. */
const SECTIONS: Record<Service, readonly string[]> = {
  gateway: ["Every service", "Stream limits (gateway)", "gateway"],
  "agent-runner": ["Every service", "agent-runner"],
  "tool-executor": ["Every service", "tool-executor"],
  scheduler: ["Every service", "scheduler"],
  "signal-bridge": ["Every service", "signal-bridge"],
};

/** The variables a service's configuration schema reads: the MONIRO_* keys of the zod objects its config module exports. */
async function schemaKeys(service: Service): Promise<string[]> {
  const module = (await import(join(ROOT, CONFIG_LOADERS[service].module))) as Record<string, unknown>;
  const keys = new Set<string>();
  for (const value of Object.values(module)) {
    let schema = value as { shape?: Record<string, unknown>; _zod?: { def?: { in?: unknown } } } | undefined;
    for (let depth = 0; depth < 3 && schema && !schema.shape; depth++) schema = schema._zod?.def?.in as typeof schema;
    for (const key of Object.keys(schema?.shape ?? {})) if (key.startsWith("MONIRO_")) keys.add(key);
  }
  return [...keys].sort();
}

/** `256kb` → 262144, `1mb` → 1048576, `5000` → 5000; undefined for anything else (a description). */
function documentedValue(cell: string): string | undefined {
  const token = /^`([^`]+)`/.exec(cell)?.[1];
  if (token === undefined) return undefined;
  const size = /^(\d+)(kb|mb)$/.exec(token);
  if (size) return String(Number(size[1]) * (size[2] === "kb" ? 1024 : 1024 * 1024));
  return token;
}

const ENV: Record<Service, Record<string, string>> = {
  gateway: { MONIRO_GATEWAY_OPEN: "true" },
  "agent-runner": {},
  "tool-executor": {},
  scheduler: {},
  "signal-bridge": {},
};

describe("docs/configuration.md agrees with the services' configuration", () => {
  const rows = documented();

  for (const service of SERVICES) {
    it(`${service}: every variable its schema reads is listed, with the default its code applies`, async () => {
      const problems: string[] = [];
      const loaded = await loadConfigOf(service, ENV[service]);
      for (const name of await schemaKeys(service)) {
        const row = (rows.get(name) ?? []).find((candidate) => SECTIONS[service].includes(candidate.section));
        if (!row) {
          // A removed variable is refused at start ("remove MONIRO_…") and said so in the prose.
          const refusal = await loadConfigOf(service, { ...ENV[service], [name]: "1" }).then(
            () => "",
            (error: Error) => error.message,
          );
          if (!(refusal.includes(`remove ${name}`) && TEXT.includes(`\`${name}\``))) {
            problems.push(`${name}: not in the tables of ${SECTIONS[service].join(", ")}`);
          }
          continue;
        }
        const value = loaded[name];
        if (name in ENV[service] || value === undefined || typeof value === "object") continue;
        if (name === "MONIRO_HTTP_PORT") {
          // "per service": the sentence under the first table gives each service's port.
          if (!new RegExp(`${service} ${value}\\b`).test(TEXT))
            problems.push(`${name}: '${service} ${value}' not said`);
          continue;
        }
        const shown = documentedValue(row.defaultCell);
        if (shown !== String(value))
          problems.push(`${name}: documented default '${row.defaultCell}', the code's ${value}`);
      }
      expect(problems).toEqual([]);
    });
  }

  it("the LLM call timeout's documented default is the provider's", () => {
    expect(documentedValue(rows.get("MONIRO_LLM_TIMEOUT_MS")?.[0]?.defaultCell ?? "")).toBe(
      String(DEFAULT_LLM_TIMEOUT_MS),
    );
  });

  it("every MONIRO_* variable listed is read by some code", () => {
    const known = new Set(SERVICES.flatMap((service) => [...envNamesKnownTo(service)]));
    const unread = [...rows.keys()].filter(
      (name) => name.startsWith("MONIRO_") && !known.has(name) && !mentionedIn(["libs/cli/src", "test/support"], name),
    );
    expect(unread).toEqual([]);
  });
});

/** Whether `name` occurs in a TypeScript source under one of `dirs` (the CLI reads its own variables; tests theirs). */
function mentionedIn(dirs: readonly string[], name: string): boolean {
  return dirs.some((dir) => sources(join(ROOT, dir)).some((file) => readFileSync(file, "utf8").includes(name)));
}

function sources(dir: string): string[] {
  return (readdirSyncSafe(dir) ?? []).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

function readdirSyncSafe(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
}
