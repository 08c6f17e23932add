import { randomBytes } from "node:crypto";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentRegistry } from "./agent-registry.js";
import { type ParsedAgentFiles, syncAgentsDirOnce } from "./file-sync.js";
import { deleteRegistryBuckets } from "./test/delete-registry-buckets.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

describe("the agents directory synced into the registry", () => {
  const namespace = `t${randomBytes(5).toString("hex")}`;
  let nc: NatsConnection;
  let registry: AgentRegistry;
  let dir: string;
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    registry = await AgentRegistry.open(nc, { namespace });
    dir = await mkdtemp(join(tmpdir(), "moniro-sync-"));
  });
  afterAll(async () => {
    registry.close();
    await deleteRegistryBuckets(nc, namespace);
    await nc.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("writes changed files only (a pass over unchanged YAML reuses its parse, yet still reads system_file), inlines system_file, keeps the last good record of a broken file and removes a deleted file's record", async () => {
    // The periodic passes keep each file's last good parse; a change of the prompt file alone must still be written.
    const parsed: ParsedAgentFiles = new Map();
    await writeFile(join(dir, "alice.yaml"), "name: alice\nmodel: m1\nprompt:\n  system_file: alice.md\n");
    await writeFile(join(dir, "alice.md"), "You are Alice.");
    await writeFile(join(dir, "bob.yaml"), "name: bob\nmodel: m1\n");
    const first = await syncAgentsDirOnce(registry, dir, parsed);
    expect(first).toMatchObject({ written: ["alice", "bob"], removed: [], problems: [] });
    expect(registry.get("alice")?.definition.prompt).toEqual({ system: "You are Alice." });
    expect(registry.get("alice")?.source).toBe("file");
    const revision = registry.get("alice")?.revision;

    expect((await syncAgentsDirOnce(registry, dir, parsed)).written).toEqual([]);
    await writeFile(join(dir, "alice.md"), "You are Alice, v2.");
    expect((await syncAgentsDirOnce(registry, dir, parsed)).written).toEqual(["alice"]);
    expect(registry.get("alice")?.definition.prompt?.system).toBe("You are Alice, v2.");
    expect(registry.get("alice")?.revision).toBeGreaterThan(revision ?? 0);

    await writeFile(join(dir, "bob.yaml"), "name: bob\nmodel: m1\nqueue: sideways\n");
    const broken = await syncAgentsDirOnce(registry, dir, parsed);
    expect(broken.problems).toEqual([expect.stringMatching(/bob\.yaml: queue\.mode: must be one of/)]);
    expect(registry.get("bob")?.definition.model).toBe("m1");

    await unlink(join(dir, "bob.yaml"));
    expect((await syncAgentsDirOnce(registry, dir, parsed)).removed).toEqual(["bob"]);
    expect(registry.get("bob")).toBeUndefined();
  });

  it("never overwrites or removes an API record, and changes nothing when the directory is missing", async () => {
    await registry.put("carol", { model: "api-model" }, { source: "api" });
    await writeFile(join(dir, "carol.yaml"), "name: carol\nmodel: file-model\n");
    const report = await syncAgentsDirOnce(registry, dir);
    expect(report.shadowed).toEqual(["carol"]);
    expect(registry.get("carol")?.definition.model).toBe("api-model");
    await unlink(join(dir, "carol.yaml"));
    await syncAgentsDirOnce(registry, dir);
    expect(registry.get("carol")?.source).toBe("api");

    const missing = await syncAgentsDirOnce(registry, join(dir, "nope"));
    expect(missing.missing).toBe(true);
    expect(registry.get("alice")).toBeDefined();
  });
});
