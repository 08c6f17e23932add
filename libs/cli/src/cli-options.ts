import { join, resolve } from "node:path";
import { DEFAULT_BASE_PORT, DEFAULT_GATEWAY_PORT, type StackOptions } from "./stack-plan.js";

export interface StackFlags {
  natsUrl?: string;
  redisUrl?: string;
  gatewayPort?: string;
  basePort?: string;
  dataDir?: string;
  namespace?: string;
  redisPrefix?: string;
}

/** The repository root: this file is libs/cli/{src,dist}/cli-options.*. */
export const REPOSITORY_ROOT = resolve(import.meta.dirname, "..", "..", "..");

function port(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65_535) {
    throw new Error(`${flag} must be a port number (1-65535, or 0 for any free port), got '${value}'`);
  }
  return parsed;
}

const NAMESPACE = /^[a-z0-9_-]+$/;

function namespace(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!NAMESPACE.test(value)) {
    throw new Error(`--namespace must be one subject token of a-z, 0-9, '_' and '-', got '${value}'`);
  }
  return value;
}

/** Flags win over MONIRO_* variables, which win over the defaults. */
export function stackOptions(
  flags: StackFlags,
  env: Record<string, string | undefined>,
  cwd: string,
  root = REPOSITORY_ROOT,
): StackOptions {
  const dataDir = resolve(cwd, flags.dataDir ?? env.MONIRO_DATA_DIR ?? ".moniro");
  const chosenNamespace = namespace(flags.namespace ?? env.MONIRO_NAMESPACE);
  // A namespace of its own gets Redis keys of its own too, unless a prefix is given.
  const redisPrefix =
    flags.redisPrefix || env.MONIRO_REDIS_PREFIX || (chosenNamespace ? `${chosenNamespace}:` : undefined);
  return {
    root,
    cwd,
    natsUrl: flags.natsUrl ?? env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222",
    redisUrl: flags.redisUrl ?? env.MONIRO_REDIS_URL ?? "redis://127.0.0.1:6379",
    gatewayPort: port(flags.gatewayPort ?? env.MONIRO_GATEWAY_PORT, DEFAULT_GATEWAY_PORT, "--gateway-port"),
    basePort: port(flags.basePort ?? env.MONIRO_BASE_PORT, DEFAULT_BASE_PORT, "--base-port"),
    dataDir,
    agentsDir: resolve(cwd, env.MONIRO_AGENTS_DIR || ".agents"),
    projectDir: resolve(cwd, env.MONIRO_PROJECT_DIR || "."),
    workspacesDir: resolve(cwd, env.MONIRO_WORKSPACES_DIR || join(dataDir, "workspaces")),
    ...(chosenNamespace ? { namespace: chosenNamespace } : {}),
    ...(redisPrefix ? { redisPrefix } : {}),
  };
}
