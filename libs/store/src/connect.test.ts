import { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { clusterSeedsOf, connectRedis, redisSettingsOf } from "./connect.js";

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
