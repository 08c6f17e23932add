import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NATS_USERS, natsAuthorization } from "@moniro/bus";
import { redisAclRules } from "@moniro/store/redis-acl";
import { afterEach, describe, expect, it } from "vitest";
import {
  credentialsFor,
  localServerCredentials,
  natsConfig,
  natsPasswordEnvironment,
  redisConfig,
  StackConfigError,
  servicesRedisRules,
} from "./server-auth.js";
import { STACK_SERVICES } from "./stack-plan.js";

describe("localServerCredentials", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-credentials-"));
    dirs.push(dir);
    return join(dir, ".moniro");
  };

  it("generates a NATS password per service, your NATS and Redis logins and the services' Redis login once, into credentials.json readable by its owner only", () => {
    const dir = dataDir();
    const notes: string[] = [];
    const first = localServerCredentials(dir, (note) => notes.push(note));
    expect(first.nats.user).toBe("moniro");
    expect(first.redis.username).toBe("moniro");
    expect(first.redis.services.username).toBe("services");
    expect(Object.keys(first.nats.services).sort()).toEqual([...NATS_USERS].sort());
    const passwords = [
      first.nats.password,
      first.redis.password,
      first.redis.services.password,
      ...Object.values(first.nats.services),
    ];
    // A letter first: NATS parses a variable's value.
    for (const password of passwords) expect(password).toMatch(/^[a-z][0-9a-f]{48}$/);
    expect(new Set(passwords).size).toBe(passwords.length);
    expect(statSync(join(dir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o077).toBe(0);
    expect(localServerCredentials(dir, (note) => notes.push(note))).toEqual(first);
    // A new file, then an unchanged one: nothing to report.
    expect(notes).toEqual([]);
  });

  it("replaces a damaged file instead of starting servers without a password", () => {
    const dir = dataDir();
    localServerCredentials(dir);
    writeFileSync(join(dir, "credentials.json"), '{"nats":{"user":"moniro","password":""}}');
    const replaced = localServerCredentials(dir);
    expect(replaced.nats.password.length).toBeGreaterThanOrEqual(16);
    expect(JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8"))).toEqual(replaced);
    writeFileSync(join(dir, "credentials.json"), "{not json");
    expect(Object.keys(localServerCredentials(dir).nats.services)).toHaveLength(NATS_USERS.length);
  });

  it("migrates a file of an older moniro up (one NATS and one Redis login for every service): both stay yours with new passwords, each service gets its own", () => {
    const dir = dataDir();
    mkdirSync(dir, { recursive: true });
    const old = {
      nats: { user: "moniro", password: "-Old_NatsPassword0123456789abcd" },
      redis: { username: "moniro", password: "Old_RedisPassword0123456789abcd" },
    };
    writeFileSync(join(dir, "credentials.json"), JSON.stringify(old), { mode: 0o644 });
    const notes: string[] = [];
    const migrated = localServerCredentials(dir, (note) => notes.push(note));
    // Every service had the old NATS password too: no login keeps it.
    expect(migrated.nats.user).toBe("moniro");
    expect(JSON.stringify(migrated.nats)).not.toContain(old.nats.password);
    expect(Object.keys(migrated.nats.services).sort()).toEqual([...NATS_USERS].sort());
    // Every service had the old Redis password: no login keeps it, least of all yours (every key and command).
    expect(migrated.redis.username).toBe("moniro");
    expect(migrated.redis.services.username).toBe("services");
    expect(JSON.stringify(migrated.redis)).not.toContain(old.redis.password);
    expect(migrated.redis.password).not.toBe(migrated.redis.services.password);
    expect(JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8"))).toEqual(migrated);
    expect(statSync(join(dir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(
      "added a NATS password for gateway, agent-runner, tool-executor, scheduler, signal-bridge; the services' Redis login 'services'",
    );
    expect(notes[0]).toContain("a new password for your NATS login 'moniro'");
    expect(notes[0]).toContain("a new password for your Redis login 'moniro'");
    for (const secret of [old.nats.password, migrated.nats.password, old.redis.password, migrated.redis.password]) {
      expect(notes[0]).not.toContain(secret);
    }
    // Kept from now on.
    expect(localServerCredentials(dir, (note) => notes.push(note))).toEqual(migrated);
    expect(notes).toHaveLength(1);
  });

  it("never keeps a stored Redis login named `default` (switched off) or as the other one", () => {
    const dir = dataDir();
    mkdirSync(dir, { recursive: true });
    const secret = "p0123456789abcdef0123";
    writeFileSync(
      join(dir, "credentials.json"),
      JSON.stringify({
        redis: { username: "default", password: secret, services: { username: "moniro", password: secret } },
      }),
    );
    const replaced = localServerCredentials(dir);
    expect(replaced.redis.username).toBe("moniro");
    expect(replaced.redis.services.username).toBe("services");
    expect(JSON.stringify(replaced.redis)).not.toContain(secret);
  });

  it("does not keep a stored NATS login named as a service as yours", () => {
    const dir = dataDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "credentials.json"),
      JSON.stringify({ nats: { user: "gateway", password: "p0123456789abcdef0123" }, redis: {} }),
    );
    const replaced = localServerCredentials(dir);
    expect(replaced.nats.user).toBe("moniro");
    expect(replaced.nats.password).not.toBe("p0123456789abcdef0123");
  });
});

describe("server configs", () => {
  const services = Object.fromEntries(NATS_USERS.map((user) => [user, `pw-${user}-0123456789abcdef`])) as Record<
    (typeof NATS_USERS)[number],
    string
  >;
  const nats = { user: "moniro", password: "pw_0123456789abcdef", services };
  const redis = {
    username: "moniro",
    password: "rp_0123456789abcdef",
    services: { username: "services", password: "rs_0123456789abcdef" },
  };

  it("NATS: loopback, JetStream in the data dir, the services' users for the namespace plus yours, no password in the file", () => {
    const text = natsConfig(14222, "/d/.moniro/nats", "dev", "moniro");
    expect(text).toContain('listen: "127.0.0.1:14222"');
    expect(text).toContain('jetstream { store_dir: "/d/.moniro/nats" }');
    // Exactly the deployments' users, with the namespace's subjects, and then yours.
    const users = natsAuthorization("dev").replace(/\n {2}\]\n\}$/, "");
    expect(text).toContain(`${users}\n    { user: "moniro", password: $MONIRO_NATS_OPERATOR_PASSWORD }\n  ]\n}`);
    expect(text).toContain('"dev.in.*"');
    expect(text).not.toContain('"moniro.in.*"');
    for (const password of [nats.password, ...Object.values(services)]) expect(text).not.toContain(password);
  });

  it("NATS: each password in the variable its user's entry names, quoted (NATS parses the value)", () => {
    expect(natsPasswordEnvironment(nats)).toEqual({
      MONIRO_NATS_PASSWORD_GATEWAY: '"pw-gateway-0123456789abcdef"',
      MONIRO_NATS_PASSWORD_AGENT_RUNNER: '"pw-agent-runner-0123456789abcdef"',
      MONIRO_NATS_PASSWORD_TOOL_EXECUTOR: '"pw-tool-executor-0123456789abcdef"',
      MONIRO_NATS_PASSWORD_SCHEDULER: '"pw-scheduler-0123456789abcdef"',
      MONIRO_NATS_PASSWORD_SIGNAL_BRIDGE: '"pw-signal-bridge-0123456789abcdef"',
      MONIRO_NATS_OPERATOR_PASSWORD: '"pw_0123456789abcdef"',
    });
    const text = natsConfig(14222, "/d", "moniro", "moniro");
    for (const variable of Object.keys(natsPasswordEnvironment(nats))) expect(text).toContain(`password: $${variable}`);
  });

  it("Redis: loopback, AOF, the default user off, yours with every right, the services' with redisAclRules of the prefix", () => {
    const lines = redisConfig(16379, "/d/.moniro/redis", redis, servicesRedisRules("dev:")).split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        "bind 127.0.0.1",
        "port 16379",
        "appendonly yes",
        // Off, with the rules Redis checks a transaction replayed from the AOF against (redis/redis#14541).
        "user default off ~* &* +@all",
        "user moniro on >rp_0123456789abcdef ~* &* +@all",
      ]),
    );
    const services = lines.filter((line) => line.startsWith("user services "));
    expect(services).toEqual([
      `user services on >rs_0123456789abcdef ${redisAclRules("dev:")
        .map((rule) => `"${rule}"`)
        .join(" ")}`,
    ]);
    expect(services[0]).toContain('"~dev:*" "resetchannels" "+@all" "-@dangerous"');
    expect(lines.filter((line) => line.startsWith("user "))).toHaveLength(3);
  });

  it("Redis: the services' rules of the stack's prefix, the services' default without one; a prefix that cannot be a key pattern is a config error naming the variable", () => {
    expect(servicesRedisRules("team-a:")).toEqual(redisAclRules("team-a:"));
    expect(servicesRedisRules(undefined)).toEqual(redisAclRules("moniro:"));
    for (const prefix of ["a b:", "moniro*", "x?:", "[a]:"]) {
      expect(() => servicesRedisRules(prefix)).toThrow(StackConfigError);
      expect(() => servicesRedisRules(prefix)).toThrow(
        `MONIRO_REDIS_PREFIX (--redis-prefix): the Redis key prefix '${prefix}' cannot be an ACL key pattern`,
      );
    }
    // A quote is a legal key character: quoted for the config file, not cut short.
    const quoted = redisConfig(16379, "/d", redis, servicesRedisRules("it's\"x:"));
    expect(quoted).toContain('"~it\'s\\"x:*"');
  });

  it("hands the services the credentials of the servers up started, and only those: for NATS each its own user, for Redis the services' one, never yours", () => {
    const stored = { nats, redis };
    const both = credentialsFor(["nats", "redis"], stored);
    expect(both.redis).toEqual({ username: "services", password: "rs_0123456789abcdef" });
    for (const service of STACK_SERVICES) {
      expect(both.nats?.[service]).toEqual({ user: service, password: services[service] });
    }
    expect(JSON.stringify(both)).not.toContain(nats.password);
    expect(JSON.stringify(both)).not.toContain(redis.password);
    expect(credentialsFor(["redis"], stored)).toEqual({ redis: redis.services });
    expect(credentialsFor([], stored)).toEqual({});
  });
});
