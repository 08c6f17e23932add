import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { redactUrlCredentials } from "@moniro/envelopes";
import { type Endpoint, endpointOf, isLocalHost } from "./tcp-probe.js";

export type ServerName = "nats" | "redis";

export const SERVER_BINARIES: Record<ServerName, string> = { nats: "nats-server", redis: "redis-server" };
const DEFAULT_PORTS: Record<ServerName, number> = { nats: 4222, redis: 6379 };
const LABELS: Record<ServerName, string> = { nats: "NATS", redis: "Redis" };

/** Exact steps to get the servers, printed when `up` cannot start them itself. */
export function installInstructions(missing: readonly ServerName[]): string {
  const packages = missing.map((name) => SERVER_BINARIES[name]).join(" ");
  return [
    `Install ${missing.map((m) => SERVER_BINARIES[m]).join(" and ")} and run this again:`,
    `  sudo apt-get install -y ${packages}      # Debian/Ubuntu`,
    "or run them with Docker from this repository (passwords in .env: see .env.example):",
    "  docker compose up -d nats redis",
    "  set -a; . ./.env; set +a; export MONIRO_REDIS_USERNAME=moniro   # their logins, for this shell",
  ].join("\n");
}

export class InfraError extends Error {
  override readonly name = "InfraError";
}

/** Where Debian/Ubuntu put servers; searched after PATH (nats-server may land in /usr/sbin). */
const SBIN_DIRS = ["/usr/sbin", "/usr/local/sbin", "/sbin"];

/**
 * The directories `up` looks for nats-server / redis-server in:
 * MONIRO_SERVER_PATH when set (exactly those), else PATH plus the sbin directories.
 */
export function serverSearchDirs(env: Record<string, string | undefined>): string[] {
  if (env.MONIRO_SERVER_PATH !== undefined) return env.MONIRO_SERVER_PATH.split(delimiter).filter(Boolean);
  return [...(env.PATH ?? "").split(delimiter).filter(Boolean), ...SBIN_DIRS];
}

/** The first executable `name` in `dirs`. */
export function findExecutable(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The config file `up` writes for a server it starts (it holds the password: mode 0600). */
export function serverConfigFile(name: ServerName, dataDir: string): string {
  return join(dataDir, name, `${name}.conf`);
}

/**
 * The command line `up` starts a local server with: everything else (loopback
 * address, port, data directory, JetStream / AOF, the services' user) is in
 * its config file, so no password appears on a command line.
 */
export function serverCommand(name: ServerName, binary: string, dataDir: string): string[] {
  const config = serverConfigFile(name, dataDir);
  return name === "nats" ? [binary, "-c", config] : [binary, config];
}

export interface ServerPlan {
  name: ServerName;
  endpoint: Endpoint;
  /** Set when the server does not answer and can be started: the command to run. */
  start?: string[];
}

export interface InfraProbe {
  answers(host: string, port: number): Promise<boolean>;
  findExecutable(name: string): string | undefined;
}

/**
 * Decides, for NATS and Redis, whether they already answer or which command
 * starts them. Throws InfraError with install instructions when a server is
 * down and its binary is missing, or names the URL when a remote one is down.
 */
export async function planServers(
  urls: Record<ServerName, string>,
  dataDir: string,
  probe: InfraProbe,
): Promise<ServerPlan[]> {
  const plans: ServerPlan[] = [];
  const missing: ServerName[] = [];
  for (const name of ["nats", "redis"] as const) {
    const endpoint = endpointOf(urls[name], DEFAULT_PORTS[name]);
    if (await probe.answers(endpoint.host, endpoint.port)) {
      plans.push({ name, endpoint });
      continue;
    }
    if (!isLocalHost(endpoint.host)) {
      throw new InfraError(
        `${LABELS[name]} is not answering at ${redactUrlCredentials(urls[name])}; start it, or point MONIRO_${name.toUpperCase()}_URL at one that runs.`,
      );
    }
    const binary = probe.findExecutable(SERVER_BINARIES[name]);
    if (!binary) {
      missing.push(name);
      continue;
    }
    plans.push({ name, endpoint, start: serverCommand(name, binary, dataDir) });
  }
  if (missing.length > 0) {
    const what = missing.map((m) => `${LABELS[m]} (${redactUrlCredentials(urls[m])})`).join(" and ");
    throw new InfraError(
      `${what} not answering, and ${missing.map((m) => SERVER_BINARIES[m]).join(" / ")} not found on PATH.\n${installInstructions(missing)}`,
    );
  }
  return plans;
}
