import { describe, expect, it } from "vitest";
import { InfraError, installInstructions, planServers, serverSearchDirs } from "./infra.js";

const URLS = { nats: "nats://127.0.0.1:4222", redis: "redis://127.0.0.1:6379" };

function probe(answering: number[], binaries: Record<string, string>) {
  return {
    answers: async (_host: string, port: number) => answering.includes(port),
    findExecutable: (name: string) => binaries[name],
  };
}

describe("planServers", () => {
  it("uses servers that already answer", async () => {
    const plans = await planServers(URLS, "/d/.moniro", probe([4222, 6379], {}));
    expect(plans.map((p) => [p.name, p.start])).toEqual([
      ["nats", undefined],
      ["redis", undefined],
    ]);
  });

  it("starts missing servers from PATH with their config file under the data dir (no password on the command line)", async () => {
    const plans = await planServers(
      URLS,
      "/d/.moniro",
      probe([], { "nats-server": "/usr/sbin/nats-server", "redis-server": "/usr/bin/redis-server" }),
    );
    expect(plans[0]?.start).toEqual(["/usr/sbin/nats-server", "-c", "/d/.moniro/nats/nats.conf"]);
    expect(plans[1]?.start).toEqual(["/usr/bin/redis-server", "/d/.moniro/redis/redis.conf"]);
    expect(plans.map((p) => p.endpoint.port)).toEqual([4222, 6379]);
  });

  it("prints exact install instructions when a binary is missing", async () => {
    const error = await planServers(URLS, "/d", probe([6379], {})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfraError);
    const message = (error as Error).message;
    expect(message).toContain("NATS (nats://127.0.0.1:4222) not answering, and nats-server not found on PATH");
    expect(message).toContain("apt-get install -y nats-server");
    expect(message).toContain("docker compose up -d nats redis");
    // Compose's NATS has a user per service: their passwords (MONIRO_NATS_PASSWORD_<SERVICE>) come from .env.
    expect(message).toContain("set -a; . ./.env; set +a");
    expect(message).not.toContain("Redis (");
  });

  it("names both servers when both are missing, and refuses to start a remote one", async () => {
    expect(installInstructions(["nats", "redis"])).toContain("apt-get install -y nats-server redis-server");
    await expect(planServers(URLS, "/d", probe([], {}))).rejects.toThrow("nats-server / redis-server not found");
    await expect(
      planServers({ ...URLS, redis: "redis://cache.internal:6379" }, "/d", probe([4222], { "redis-server": "/x" })),
    ).rejects.toThrow("Redis is not answering at redis://cache.internal:6379");
    const credentialed = planServers(
      { ...URLS, redis: "redis://moniro:s3cret@cache.internal:6379" },
      "/d",
      probe([4222], { "redis-server": "/x" }),
    );
    await expect(credentialed).rejects.toThrow("Redis is not answering at redis://moniro:***@cache.internal:6379");
    await expect(credentialed).rejects.not.toThrow("s3cret");
  });

  it("keeps the custom ports of the URLs for the servers it starts", async () => {
    const plans = await planServers(
      { nats: "nats://127.0.0.1:14222", redis: "redis://localhost:16379" },
      "/d",
      probe([], { "nats-server": "n", "redis-server": "r" }),
    );
    expect(plans.map((p) => p.endpoint.port)).toEqual([14222, 16379]);
  });
});

describe("serverSearchDirs", () => {
  it("is PATH plus the sbin directories, or exactly MONIRO_SERVER_PATH when set", () => {
    expect(serverSearchDirs({ PATH: "/a:/b" })).toEqual(["/a", "/b", "/usr/sbin", "/usr/local/sbin", "/sbin"]);
    expect(serverSearchDirs({ PATH: "/a", MONIRO_SERVER_PATH: "/opt/nats:/opt/redis" })).toEqual([
      "/opt/nats",
      "/opt/redis",
    ]);
    expect(serverSearchDirs({ PATH: "/a", MONIRO_SERVER_PATH: "" })).toEqual([]);
  });
});
