import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegistryChange } from "./agent-record.js";
import { AgentRegistry, registryBucketNames } from "./agent-registry.js";
import { RegistryConflictError, RegistryInvalidError, RegistryNotFoundError } from "./errors.js";
import { deleteRegistryBuckets } from "./test/delete-registry-buckets.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the agent registry in NATS KV", () => {
  const namespace = `t${randomBytes(5).toString("hex")}`;
  let nc: NatsConnection;
  let other: NatsConnection;
  const opened: AgentRegistry[] = [];
  const open = async (connection: NatsConnection) => {
    const registry = await AgentRegistry.open(connection, { namespace });
    opened.push(registry);
    return registry;
  };
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    other = await connect({ servers: NATS_URL });
  });
  afterAll(async () => {
    for (const registry of opened) registry.close();
    await deleteRegistryBuckets(nc, namespace);
    await nc.close();
    await other.close();
  });

  it("creates, replaces and removes a definition that another process sees through its watch", async () => {
    const one = await open(nc);
    const two = await open(other);
    const changes: RegistryChange[] = [];
    two.onChange((change) => changes.push(change));

    const created = await one.put("alice", { model: "claude-sonnet-4-5", soul: "kind" }, { source: "api" });
    expect(created.created).toBe(true);
    expect(created.record).toMatchObject({
      name: "alice",
      source: "api",
      definition: { name: "alice", soul: { text: "kind" } },
    });
    await until(() => two.get("alice")?.revision === created.record.revision);
    expect(two.get("alice")?.definition.model).toBe("claude-sonnet-4-5");

    const replaced = await two.put("alice", { model: "claude-haiku-4-5" }, { source: "api" });
    expect(replaced.created).toBe(false);
    expect(replaced.record.revision).toBeGreaterThan(created.record.revision);
    await until(() => one.get("alice")?.definition.model === "claude-haiku-4-5");

    const removed = await one.remove("alice");
    expect(removed.revision).toBe(replaced.record.revision);
    await until(() => two.get("alice") === undefined);
    expect(two.removed("alice")).toMatchObject({ name: "alice", revision: replaced.record.revision, source: "api" });
    // A process started after the deletion knows of it too (the key's deletion marker).
    const later = await open(nc);
    expect(later.get("alice")).toBeUndefined();
    expect(later.removed("alice")).toMatchObject({ name: "alice", removedAt: expect.any(String) });
    expect(changes.map((change) => [change.name, change.record?.definition.model ?? null])).toEqual([
      ["alice", "claude-sonnet-4-5"],
      ["alice", "claude-haiku-4-5"],
      ["alice", null],
    ]);
  });

  it("opens with the whole snapshot already in its cache", async () => {
    const writer = await open(nc);
    await writer.put("bob", { model: "m1" }, { source: "file", file: "/agents/bob.yaml" });
    await writer.put("carol", { model: "m2" }, { source: "api" });
    const reader = await open(other);
    expect(reader.names()).toEqual(expect.arrayContaining(["bob", "carol"]));
    expect(reader.get("bob")).toMatchObject({ source: "file", file: "/agents/bob.yaml" });
  });

  it("lists every agent in the order of its names", async () => {
    const own = `t${randomBytes(5).toString("hex")}`;
    const registry = await AgentRegistry.open(nc, { namespace: own });
    try {
      for (const name of ["b2", "a_b", "a1", "a-b", "ab"]) await registry.put(name, { model: "m" }, { source: "api" });
      expect(registry.list().map((record) => record.name)).toEqual(["a-b", "a1", "a_b", "ab", "b2"]);
      expect(registry.list().map((record) => record.name)).toEqual(registry.names());
    } finally {
      registry.close();
      await deleteRegistryBuckets(nc, own);
    }
  });

  it("refuses a write at a stale revision, a second create, and names the invalid field", async () => {
    const registry = await open(nc);
    const first = await registry.put("dave", { model: "m1" }, { source: "api" });
    await registry.put("dave", { model: "m2" }, { source: "api", ifRevision: first.record.revision });
    await expect(
      registry.put("dave", { model: "m3" }, { source: "api", ifRevision: first.record.revision }),
    ).rejects.toThrow(RegistryConflictError);
    await expect(registry.put("dave", { model: "m3" }, { source: "api", create: true })).rejects.toThrow(
      /already exists/,
    );
    await expect(registry.put("erin", { model: "m" }, { source: "api", ifRevision: 4 })).rejects.toThrow(
      RegistryNotFoundError,
    );
    const invalid = await registry.put("dave", { model: "m", queue: "sideways" }, { source: "api" }).catch((e) => e);
    expect(invalid).toBeInstanceOf(RegistryInvalidError);
    expect(invalid.issues).toEqual([{ path: "queue.mode", message: expect.stringContaining("must be one of") }]);
    await expect(registry.put("dave", { model: "m", name: "other" }, { source: "api" })).rejects.toThrow(
      /must equal the agent's name/,
    );
    await expect(
      registry.put("dave", { model: "m", prompt: { system_file: "p.md" } }, { source: "api" }),
    ).rejects.toThrow(/inline the prompt as 'prompt.system'/);
    expect(registry.get("dave")?.definition.model).toBe("m2");
    await expect(registry.remove("nobody")).rejects.toThrow(RegistryNotFoundError);
  });

  it("keeps ephemeral agents in a separate in-memory bucket, under names no other agent has", async () => {
    const registry = await open(nc);
    const reader = await open(other);
    await registry.put("agent-1", { model: "m" }, { source: "ephemeral" });
    await until(() => reader.get("agent-1")?.source === "ephemeral");
    await expect(registry.put("agent-1", { model: "m" }, { source: "api" })).rejects.toThrow(/ephemeral agent/);
    const info = await (await jetstreamManager(nc)).streams.info(`KV_${registryBucketNames(namespace).ephemeral}`);
    expect(info.config.storage).toBe("memory");
    await registry.remove("agent-1");
    await until(() => reader.get("agent-1") === undefined);
  });
});
