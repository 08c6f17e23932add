import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NATS_USERS, type NatsUser, natsAuthorization, passwordVariable } from "@moniro/bus/nats-permissions";
import type { ServerCredentials } from "./stack-plan.js";
import { STACK_SERVICES } from "./stack-services.js";

/**
 * Credentials of the NATS and Redis servers `moniro up` starts itself:
 * generated once, kept in `<dataDir>/credentials.json` (mode 0600), so a
 * server restarted on the same data accepts the same clients. Nothing here
 * prints a password.
 */
export const CREDENTIALS_FILE = "credentials.json";
/** The services' Redis ACL user, and your own NATS user (the operator's). */
export const SERVICES_USER = "moniro";
/** The variable nats-server reads the operator's password from. */
export const OPERATOR_PASSWORD_VARIABLE = "MONIRO_NATS_OPERATOR_PASSWORD";

export interface StoredCredentials {
  nats: {
    /**
     * Yours (the operator's): every subject, for the `nats` CLI or an integration you try
     * against the local stack. No service is given it.
     */
    user: string;
    password: string;
    /** Per service: the password of its own NATS user (named as the service), with only its subjects. */
    services: Record<NatsUser, string>;
  };
  redis: { username: string; password: string };
}

/**
 * A letter, then hex: safe unquoted in a Redis ACL rule and in a NATS config (which parses a
 * variable's value: it must not start with a digit).
 */
function newPassword(): string {
  return `p${randomBytes(24).toString("hex")}`;
}

const isName = (s: unknown): s is string => typeof s === "string" && /^[a-z0-9_-]+$/.test(s);
const isSecret = (s: unknown): s is string => typeof s === "string" && /^[A-Za-z0-9_-]{16,}$/.test(s);

/**
 * The stored credentials; what is missing or unreadable is generated and the file rewritten
 * (mode 0600, in a 0700 data dir). A file of an older `moniro up` (one NATS user `moniro` for
 * every service) keeps that user and password as the operator's and gets a password per
 * service added; `note` is told what was added to an existing file (never a password).
 */
export function localServerCredentials(dataDir: string, note?: (text: string) => void): StoredCredentials {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, CREDENTIALS_FILE);
  const existed = existsSync(file);
  // biome-ignore lint/suspicious/noExplicitAny: an untrusted file, checked field by field below
  let found: any;
  if (existed) {
    try {
      found = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      // unreadable: everything is generated below; the servers get their config rewritten from it on start
    }
  }
  const generated: string[] = [];
  const operatorUser = found?.nats?.user;
  const operatorKept =
    isName(operatorUser) && !(NATS_USERS as readonly string[]).includes(operatorUser) && isSecret(found.nats.password);
  if (!operatorKept) generated.push(`the NATS login '${SERVICES_USER}'`);
  const missing = NATS_USERS.filter((user) => !isSecret(found?.nats?.services?.[user]));
  if (missing.length > 0) generated.push(`a NATS password for ${missing.join(", ")}`);
  const redisKept = isName(found?.redis?.username) && isSecret(found?.redis?.password);
  if (!redisKept) generated.push("the Redis login");

  const credentials: StoredCredentials = {
    nats: {
      user: operatorKept ? operatorUser : SERVICES_USER,
      password: operatorKept ? found.nats.password : newPassword(),
      services: Object.fromEntries(
        NATS_USERS.map((user) => [user, missing.includes(user) ? newPassword() : found.nats.services[user]]),
      ) as Record<NatsUser, string>,
    },
    redis: redisKept
      ? { username: found.redis.username, password: found.redis.password }
      : { username: SERVICES_USER, password: newPassword() },
  };
  if (generated.length > 0) {
    writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    if (existed) note?.(`${file}: added ${generated.join("; ")} (missing or unreadable); kept the rest`);
  }
  chmodSync(file, 0o600);
  return credentials;
}

/** Writes a file only its owner can read (a server config holding a password). */
export function writePrivateFile(file: string, text: string): string {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

const USERS_END = "\n  ]\n}";

/**
 * nats-server config: loopback only, JetStream with its store, and `natsAuthorization(namespace)`
 * (libs/bus, the users every deployment ships: one per service, each with only its subjects in
 * `namespace`) plus `operator`, yours, with every subject. No password is in it: nats-server reads
 * them from its environment (`natsPasswordEnvironment`).
 */
export function natsConfig(port: number, storeDir: string, namespace: string, operator: string): string {
  const services = natsAuthorization(namespace);
  if (!services.endsWith(USERS_END)) throw new Error("natsAuthorization: not an `authorization { users = [ … ] }`");
  const operatorEntry = `    { user: ${JSON.stringify(operator)}, password: $${OPERATOR_PASSWORD_VARIABLE} }`;
  return [
    "# Written by moniro up: a user per service with only its subjects (libs/bus natsAuthorization)",
    `# in namespace ${namespace}, and ${operator} (yours: every subject). The passwords are in`,
    "# ../credentials.json and reach nats-server through its environment, never this file.",
    `listen: "127.0.0.1:${port}"`,
    `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
    `${services.slice(0, -USERS_END.length)}\n${operatorEntry}${USERS_END}`,
    "",
  ].join("\n");
}

/**
 * The environment nats-server reads the passwords of `natsConfig` from: `passwordVariable(user)`
 * per service and the operator's. Quoted, because NATS parses a variable's value (a password
 * of an older `moniro up` may start with a digit or '-').
 */
export function natsPasswordEnvironment(nats: StoredCredentials["nats"]): Record<string, string> {
  return {
    ...Object.fromEntries(NATS_USERS.map((user) => [passwordVariable(user), JSON.stringify(nats.services[user])])),
    [OPERATOR_PASSWORD_VARIABLE]: JSON.stringify(nats.password),
  };
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

/**
 * What the services get for the servers `up` started (only those): for NATS each service its
 * own user and password (the operator's login goes to none), for Redis the one ACL user.
 */
export function credentialsFor(started: ReadonlyArray<"nats" | "redis">, stored: StoredCredentials): ServerCredentials {
  const nats = Object.fromEntries(
    STACK_SERVICES.map((service) => [service, { user: service, password: stored.nats.services[service] }]),
  ) as NonNullable<ServerCredentials["nats"]>;
  return {
    ...(started.includes("nats") ? { nats } : {}),
    ...(started.includes("redis") ? { redis: stored.redis } : {}),
  };
}
