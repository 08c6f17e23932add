import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT, type SERVICES } from "./manifests.js";

export type Service = (typeof SERVICES)[number];

/**
 * Where each service's environment is parsed: the module and the function its
 * src/main.ts calls. The tests check main.ts still calls it, so this table
 * cannot silently drift from the services.
 */
export const CONFIG_LOADERS: Record<Service, { module: string; load: string }> = {
  gateway: { module: "services/gateway/src/config.ts", load: "loadGatewayConfig" },
  "agent-runner": { module: "services/agent-runner/src/runtime/runner-config.ts", load: "loadRunnerConfig" },
  "tool-executor": { module: "services/tool-executor/src/executor-config.ts", load: "loadExecutorConfig" },
  scheduler: { module: "services/scheduler/src/scheduler-config.ts", load: "loadSchedulerConfig" },
  "signal-bridge": { module: "services/signal-bridge/src/signal-config.ts", load: "loadSignalBridgeConfig" },
};

type Loader = (env: Record<string, string | undefined>) => unknown;

/**
 * Runs the service's own configuration loader on `env`, as the service does
 * at start (a ConfigError there makes it exit with status 2). Returns the
 * error message, or undefined when the service would accept the environment.
 */
export async function configErrorOf(service: Service, env: Record<string, string>): Promise<string | undefined> {
  const { module, load } = CONFIG_LOADERS[service];
  // A computed specifier: vitest loads the TypeScript source; tsc does not follow it.
  const loaded = (await import(join(ROOT, module))) as Record<string, Loader>;
  const loader = loaded[load];
  if (typeof loader !== "function") return `${module} no longer exports ${load}`;
  try {
    loader(env);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Environment variable names as they are written in code: MONIRO_*, OTEL_*, ANTHROPIC_*. */
const ENV_NAME = /\b(?:MONIRO|OTEL|ANTHROPIC)_[A-Z0-9_]*[A-Z0-9]\b/g;

/** Names set by the platform or Node itself that a deployment may legitimately set. */
export const PLATFORM_ENV = new Set(["NODE_ENV", "NODE_OPTIONS", "TZ", "HOME", "PATH"]);

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (path.endsWith(".ts") && !path.endsWith(".test.ts") && !path.includes(`${join("src", "test")}`)) {
      files.push(path);
    }
  }
  return files;
}

/** Workspace directory of each @moniro/* package. */
function workspaces(): Map<string, string> {
  const map = new Map<string, string>();
  for (const parent of ["libs", "services"]) {
    for (const entry of readdirSync(join(ROOT, parent))) {
      const manifest = join(ROOT, parent, entry, "package.json");
      try {
        map.set((JSON.parse(readFileSync(manifest, "utf8")) as { name: string }).name, join(parent, entry));
      } catch {
        // not a package
      }
    }
  }
  return map;
}

/**
 * Every environment variable name the service's code (its own src/ and the
 * src/ of every @moniro/* package it depends on, transitively) mentions: the
 * names it can read. A name in a deploy artefact that is not among them is a
 * typo or a setting nothing reads.
 */
export function envNamesKnownTo(service: Service): Set<string> {
  const packages = workspaces();
  const seen = new Set<string>();
  const pending = [`services/${service}`];
  const names = new Set<string>();
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    if (seen.has(dir)) continue;
    seen.add(dir);
    for (const file of sourceFiles(join(ROOT, dir, "src"))) {
      for (const match of readFileSync(file, "utf8").matchAll(ENV_NAME)) names.add(match[0]);
    }
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      const workspace = packages.get(dependency);
      if (workspace) pending.push(workspace);
    }
  }
  return names;
}

/** Names in `env` that the service's code never mentions (and the platform does not define). */
export function unknownEnvNames(service: Service, names: Iterable<string>): string[] {
  const known = envNamesKnownTo(service);
  return [...names].filter((name) => !known.has(name) && !PLATFORM_ENV.has(name));
}

/** Values that look like credentials: kept out of ConfigMaps and plain env values. */
export const SECRET_NAME = /(KEY|TOKEN|PASSWORD|SECRET)S?$/;

/** The service's parsed configuration for `env` (throws the loader's ConfigError). */
export async function loadConfigOf(service: Service, env: Record<string, string>): Promise<Record<string, unknown>> {
  const { module, load } = CONFIG_LOADERS[service];
  const loaded = (await import(join(ROOT, module))) as Record<string, Loader>;
  return (loaded[load] as Loader)(env) as Record<string, unknown>;
}
