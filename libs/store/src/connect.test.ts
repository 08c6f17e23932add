import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { clusterSeedsOf, connectRedis, RedisConfigError, redisSettingsOf } from "./connect.js";

describe("connecting to Redis", () => {
  it("reads a cluster's seed list: redis:// and bare host:port, TLS from rediss://, the first credentials", () => {
    expect(clusterSeedsOf("redis://10.0.0.1:7000, 10.0.0.2:7001,redis://u:p%40ss@10.0.0.3")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 7001 },
        { host: "10.0.0.3", port: 6379 },
      ],
      tls: false,
      username: "u",
      password: "p@ss",
    });
    expect(clusterSeedsOf("rediss://a:1,rediss://b:2").tls).toBe(true);
  });

  it("refuses a seed list that is empty or not Redis URLs, naming the variable", () => {
    expect(() => clusterSeedsOf(" , ")).toThrow(/MONIRO_REDIS_URL lists no Redis Cluster seed node/);
    expect(() => clusterSeedsOf("http://a:1")).toThrow(/MONIRO_REDIS_URL: 'http:' is not redis: or rediss:/);
  });

  it("refuses a single-server URL that is not redis:// or rediss:// at start, naming the variable and the fix", () => {
    expect(() => connectRedis("http://127.0.0.1:6379", { redis: { lazyConnect: true } })).toThrow(
      new RedisConfigError("MONIRO_REDIS_URL: 'http:' is not redis: or rediss: (write redis://host:6379)"),
    );
    for (const url of ["redis://127.0.0.1:1", "rediss://127.0.0.1:1", "127.0.0.1:1", "/tmp/redis.sock"]) {
      connectRedis(url, { redis: { lazyConnect: true } }).disconnect();
    }
  });

  it("refuses an unreadable MONIRO_REDIS_TLS_CA_FILE, naming the variable, the path and the fix", () => {
    const dir = mkdtempSync(join(tmpdir(), "moniro-redis-ca-"));
    const missing = join(dir, "none.pem");
    const connect = (file: string) => () =>
      connectRedis(
        { MONIRO_REDIS_URL: "redis://127.0.0.1:1", MONIRO_REDIS_TLS_CA_FILE: file },
        { redis: { lazyConnect: true } },
      );
    expect(connect(missing)).toThrow(
      new RedisConfigError(
        `MONIRO_REDIS_TLS_CA_FILE: cannot read '${missing}' (ENOENT); fix the path or unset MONIRO_REDIS_TLS_CA_FILE`,
      ),
    );
    expect(connect(dir)).toThrow(`MONIRO_REDIS_TLS_CA_FILE: cannot read '${dir}' (EISDIR)`);
    rmSync(dir, { recursive: true, force: true });
  });

  it("makes a Cluster client with MONIRO_REDIS_CLUSTER=true, a single-server client without", () => {
    const base = { MONIRO_REDIS_URL: "redis://127.0.0.1:1,redis://127.0.0.1:2" };
    expect(redisSettingsOf({ ...base, MONIRO_REDIS_CLUSTER: true }).cluster).toBe(true);
    const cluster = connectRedis({ ...base, MONIRO_REDIS_CLUSTER: true }, { redis: { lazyConnect: true } });
    const single = connectRedis("redis://127.0.0.1:1", { redis: { lazyConnect: true } });
    try {
      expect(cluster).toBeInstanceOf(Cluster);
      expect(single).toBeInstanceOf(Redis);
    } finally {
      cluster.disconnect();
      single.disconnect();
    }
  });
});
