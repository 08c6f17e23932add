import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ServerCredentials } from "./stack-plan.js";

/**
 * Credentials of the NATS and Redis servers `moniro up` starts itself:
 * generated once, kept in `<dataDir>/credentials.json` (mode 0600), so a
 * server restarted on the same data accepts the same clients. Nothing here
 * prints a password.
 */
export const CREDENTIALS_FILE = "credentials.json";
export const SERVICES_USER = "moniro";

export interface StoredCredentials {
  nats: { user: string; password: string };
  redis: { username: string; password: string };
}

/** Letters, digits, '-' and '_': safe unquoted in a Redis ACL rule and quoted in a NATS config. */
function newPassword(): string {
  return randomBytes(24).toString("base64url");
}

function isStored(value: unknown): value is StoredCredentials {
  const v = value as StoredCredentials;
  const name = (s: unknown) => typeof s === "string" && /^[a-z0-9_-]+$/.test(s);
  const secret = (s: unknown) => typeof s === "string" && /^[A-Za-z0-9_-]{16,}$/.test(s);
  return name(v?.nats?.user) && secret(v?.nats?.password) && name(v?.redis?.username) && secret(v?.redis?.password);
}

/** The stored credentials, created (mode 0600, in a 0700 data dir) when absent or unreadable. */
export function localServerCredentials(dataDir: string): StoredCredentials {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, CREDENTIALS_FILE);
  if (existsSync(file)) {
    try {
      const stored = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (isStored(stored)) {
        chmodSync(file, 0o600);
        return stored;
      }
    } catch {
      // unreadable: replaced below; the servers get their config rewritten from it on start
    }
  }
  const created: StoredCredentials = {
    nats: { user: SERVICES_USER, password: newPassword() },
    redis: { username: SERVICES_USER, password: newPassword() },
  };
  writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return created;
}

/** Writes a file only its owner can read (a server config holding a password). */
export function writePrivateFile(file: string, text: string): string {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** nats-server config: loopback only, JetStream with its store, one user for the services. */
export function natsConfig(port: number, storeDir: string, credentials: StoredCredentials["nats"]): string {
  return [
    "# Written by moniro up; the password is in ../credentials.json.",
    `listen: "127.0.0.1:${port}"`,
    `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
    "authorization {",
    `  users = [ { user: ${JSON.stringify(credentials.user)}, password: ${JSON.stringify(credentials.password)} } ]`,
    "}",
    "",
  ].join("\n");
}

/** redis-server config: loopback only, AOF, the `default` user off and one ACL user for the services. */
export function redisConfig(port: number, dir: string, credentials: StoredCredentials["redis"]): string {
  return [
    "# Written by moniro up; the password is in ../credentials.json.",
    "bind 127.0.0.1",
    `port ${port}`,
    `dir ${JSON.stringify(dir)}`,
    'save ""',
    "appendonly yes",
    "user default off",
    `user ${credentials.username} on >${credentials.password} ~* &* +@all`,
    "",
  ].join("\n");
}

/** What the services get for the servers `up` started (only those). */
export function credentialsFor(started: ReadonlyArray<"nats" | "redis">, stored: StoredCredentials): ServerCredentials {
  return {
    ...(started.includes("nats") ? { nats: stored.nats } : {}),
    ...(started.includes("redis") ? { redis: stored.redis } : {}),
  };
}
