import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { credentialsFor, localServerCredentials, natsConfig, redisConfig } from "./server-auth.js";

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

  it("generates a password per server once, into credentials.json readable by its owner only", () => {
    const dir = dataDir();
    const first = localServerCredentials(dir);
    expect(first.nats.user).toBe("moniro");
    expect(first.redis.username).toBe("moniro");
    expect(first.nats.password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(first.redis.password).not.toBe(first.nats.password);
    expect(statSync(join(dir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o077).toBe(0);
    expect(localServerCredentials(dir)).toEqual(first);
  });

  it("replaces a damaged file instead of starting servers without a password", () => {
    const dir = dataDir();
    localServerCredentials(dir);
    writeFileSync(join(dir, "credentials.json"), '{"nats":{"user":"moniro","password":""}}');
    const replaced = localServerCredentials(dir);
    expect(replaced.nats.password.length).toBeGreaterThanOrEqual(16);
    expect(JSON.parse(readFileSync(join(dir, "credentials.json"), "utf8"))).toEqual(replaced);
  });
});

describe("server configs", () => {
  const nats = { user: "moniro", password: "pw_0123456789abcdef" };
  const redis = { username: "moniro", password: "rp_0123456789abcdef" };

  it("NATS: loopback, JetStream in the data dir, one user with a password", () => {
    const text = natsConfig(14222, "/d/.moniro/nats", nats);
    expect(text).toContain('listen: "127.0.0.1:14222"');
    expect(text).toContain('jetstream { store_dir: "/d/.moniro/nats" }');
    expect(text).toContain('users = [ { user: "moniro", password: "pw_0123456789abcdef" } ]');
  });

  it("Redis: loopback, AOF, the default user off, an ACL user with a password", () => {
    const lines = redisConfig(16379, "/d/.moniro/redis", redis).split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        "bind 127.0.0.1",
        "port 16379",
        "appendonly yes",
        "user default off",
        "user moniro on >rp_0123456789abcdef ~* &* +@all",
      ]),
    );
  });

  it("hands the services the credentials of the servers up started, and only those", () => {
    const stored = { nats, redis };
    expect(credentialsFor(["nats", "redis"], stored)).toEqual({ nats, redis });
    expect(credentialsFor(["redis"], stored)).toEqual({ redis });
    expect(credentialsFor([], stored)).toEqual({});
  });
});
