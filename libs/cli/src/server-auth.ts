import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NATS_USERS, type NatsUser, natsAuthorization, passwordVariable } from "@moniro/bus/nats-permissions";
import { redisAclRules } from "@moniro/store/redis-acl";
import type { ServerCredentials } from "./stack-plan.js";
import { STACK_SERVICES } from "./stack-services.js";

/**
 * Credentials of the NATS and Redis servers `moniro up` starts itself:
 * generated once, kept in `<dataDir>/credentials.json` (mode 0600), so a
 * server restarted on the same data accepts the same clients. Nothing here
 * prints a password.
 */
export const CREDENTIALS_FILE = "credentials.json";
/** Your own login (the operator's), on NATS and on Redis: every subject, every key and command. */
export const OPERATOR_USER = "moniro";
/** The services' Redis ACL user: only what the services need (`redisAclRules` of the stack's key prefix). */
export const REDIS_SERVICES_USER = "services";
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
  redis: {
    /**
     * Yours (the operator's): every key and command (`redis-cli`, `ACL LOG`, `FLUSHALL` of the
     * local data). No service is given it.
     */
    username: string;
    password: string;
    /** The services' user: keys under the stack's prefix only, no `@dangerous` command (`redisAclRules`). */
    services: { username: string; password: string };
  };
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
/** A Redis ACL user `up` may define: not `default`, which its config switches off. */
const isRedisUser = (s: unknown): s is string => isName(s) && s !== "default";

/**
 * The stored credentials; what is missing or unreadable is generated and the file rewritten
 * (mode 0600, in a 0700 data dir). A file of an older `moniro up` (one NATS user `moniro` and
 * one Redis login for every service) gets a NATS password per service and the services' own
 * Redis login added, and its two logins, which every service held, new passwords: they stay
 * yours, with every right, so they must not be ones a service ever saw. `note` is told what was
 * added or renewed in an existing file (never a password).
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
  if (!operatorKept) generated.push(`the NATS login '${OPERATOR_USER}'`);
  // Without the services' own passwords the stored login is an older `up`'s, which every service held.
  const natsRenewed = operatorKept && (typeof found.nats.services !== "object" || found.nats.services === null);
  const missing = NATS_USERS.filter((user) => !isSecret(found?.nats?.services?.[user]));
  if (missing.length > 0) generated.push(`a NATS password for ${missing.join(", ")}`);
  const storedServices = found?.redis?.services;
  const redisServicesKept =
    isRedisUser(storedServices?.username) &&
    storedServices.username !== OPERATOR_USER &&
    isSecret(storedServices.password);
  if (!redisServicesKept) generated.push(`the services' Redis login '${REDIS_SERVICES_USER}'`);
  const redisServices: StoredCredentials["redis"]["services"] = redisServicesKept
    ? { username: storedServices.username, password: storedServices.password }
    : { username: REDIS_SERVICES_USER, password: newPassword() };
  const storedOperator = found?.redis?.username;
  const redisOperatorNamed = isRedisUser(storedOperator) && storedOperator !== redisServices.username;
  const redisOperatorHadPassword = redisOperatorNamed && isSecret(found.redis.password);
  // Without the services' own login the stored one is an older `up`'s, which every service held: not kept as yours.
  const redisOperatorKept = redisServicesKept && redisOperatorHadPassword;
  const redisOperator = redisOperatorNamed ? storedOperator : OPERATOR_USER;
  const renewed = redisOperatorHadPassword && !redisOperatorKept;
  if (!redisOperatorKept && !renewed) generated.push(`your Redis login '${redisOperator}'`);

  const credentials: StoredCredentials = {
    nats: {
      user: operatorKept ? operatorUser : OPERATOR_USER,
      password: operatorKept && !natsRenewed ? found.nats.password : newPassword(),
      services: Object.fromEntries(
        NATS_USERS.map((user) => [user, missing.includes(user) ? newPassword() : found.nats.services[user]]),
      ) as Record<NatsUser, string>,
    },
    redis: {
      username: redisOperator,
      password: redisOperatorKept ? found.redis.password : newPassword(),
      services: redisServices,
    },
  };
  if (generated.length > 0 || renewed || natsRenewed) {
    writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    const changes = [
      ...(generated.length > 0 ? [`added ${generated.join("; ")} (missing or unreadable)`] : []),
      ...(natsRenewed
        ? [
            `a new password for your NATS login '${operatorUser}' (an older moniro up gave the old one to every service)`,
          ]
        : []),
      ...(renewed
        ? [
            `a new password for your Redis login '${redisOperator}' (an older moniro up gave the old one to every service)`,
          ]
        : []),
    ];
    if (existed) note?.(`${file}: ${changes.join("; ")}; kept the rest`);
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

export class StackConfigError extends Error {
  override readonly name = "StackConfigError";
}

/**
 * The ACL rules of the services' user on the Redis `up` starts: `redisAclRules` of the stack's
 * key prefix (unset: the services' default, `moniro:`). A prefix that cannot be an ACL key
 * pattern is a StackConfigError naming the variable and the flag that set it.
 */
export function servicesRedisRules(prefix: string | undefined): string[] {
  try {
    return redisAclRules(prefix ?? "moniro:");
  } catch (error) {
    throw new StackConfigError(
      `MONIRO_REDIS_PREFIX (--redis-prefix): ${(error as Error).message} ` +
        "(the Redis moniro up starts lets the services' user use only the keys under it; docs/redis-keys.md)",
    );
  }
}

/** One word of a redis-server config line, double-quoted (the config's own escapes: `\"`, `\\`). */
function configWord(word: string): string {
  return `"${word.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * redis-server config: loopback only, AOF, the `default` user off (with its rules: see there),
 * your login with every key and command, and the services' user with `rules`
 * (`servicesRedisRules`: keys under the stack's prefix, no Pub/Sub channel, no `@dangerous`
 * command but the three the services use).
 */
export function redisConfig(
  port: number,
  dir: string,
  credentials: StoredCredentials["redis"],
  rules: readonly string[],
): string {
  const { services } = credentials;
  return [
    "# Written by moniro up; the passwords are in ../credentials.json.",
    "bind 127.0.0.1",
    `port ${port}`,
    `dir ${JSON.stringify(dir)}`,
    'save ""',
    "appendonly yes",
    "# Nobody logs in as `default` (off), but it keeps a fresh default user's rules: Redis checks a",
    "# MULTI/EXEC replayed from the AOF (every script's writes are one) against them, and without them",
    "# drops it on a restart (7.0; 7.2 was reported to panic: redis/redis#14541, #14156).",
    "user default off ~* &* +@all",
    "# Yours (redis-cli, ACL LOG, …); no service is given it.",
    `user ${credentials.username} on >${credentials.password} ~* &* +@all`,
    "# The services' (docs/redis-keys.md, \"The services' Redis user\").",
    `user ${services.username} on >${services.password} ${rules.map(configWord).join(" ")}`,
    "",
  ].join("\n");
}

/**
 * What the services get for the servers `up` started (only those): for NATS each service its
 * own user and password, for Redis the services' user (your logins go to none).
 */
export function credentialsFor(started: ReadonlyArray<"nats" | "redis">, stored: StoredCredentials): ServerCredentials {
  const nats = Object.fromEntries(
    STACK_SERVICES.map((service) => [service, { user: service, password: stored.nats.services[service] }]),
  ) as NonNullable<ServerCredentials["nats"]>;
  return {
    ...(started.includes("nats") ? { nats } : {}),
    ...(started.includes("redis") ? { redis: stored.redis.services } : {}),
  };
}
