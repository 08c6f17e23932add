import { randomBytes } from "node:crypto";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentRegistry } from "./agent-registry.js";
import { type ParsedAgentFiles, syncAgentsDirOnce } from "./file-sync.js";
import { deleteRegistryBuckets } from "./test/delete-registry-buckets.js";

/** Every file the sync reads (node:fs/promises readFile), to show an unchanged file is not read again. */
const reads = vi.hoisted(() => [] as string[]);
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...fs,
    readFile: ((path: Parameters<typeof fs.readFile>[0], options?: Parameters<typeof fs.readFile>[1]) => {
      reads.push(String(path));
      return fs.readFile(path, options);
    }) as typeof fs.readFile,
  };
});

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
/** More than one tick of the kernel's coarse file clock (≤ 10 ms), so a write gets a new mtime and ctime. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

describe("the periodic pass over agent files that did not change", () => {
  const namespace = `t${randomBytes(5).toString("hex")}`;
  let nc: NatsConnection;
  let registry: AgentRegistry;
  let dir: string;
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    registry = await AgentRegistry.open(nc, { namespace });
    dir = await mkdtemp(join(tmpdir(), "moniro-stamps-"));
  });
  afterAll(async () => {
    registry.close();
    await deleteRegistryBuckets(nc, namespace);
    await nc.close();
    await rm(dir, { recursive: true, force: true });
  });
  // Stamps trusted at once (settledMs 0); the default window is file-stamp.test.ts's.
  const pass = (parsed: ParsedAgentFiles) => syncAgentsDirOnce(registry, dir, parsed, { settledMs: 0 });

  it("reads no file of an unchanged agent, yet sees a same-size edit, a system_file edit, a rename over the file and a system_file added later", async () => {
    const parsed: ParsedAgentFiles = new Map();
    await writeFile(join(dir, "alice.yaml"), "name: alice\nmodel: m1\nprompt:\n  system_file: alice.md\n");
    await writeFile(join(dir, "alice.md"), "You are Alice.");
    await writeFile(join(dir, "bob.yaml"), "name: bob\nmodel: m1\n");
    expect((await pass(parsed)).written).toEqual(["alice", "bob"]);
    // alice's system_file was not stamped before its first read: one more read stamps it.
    reads.length = 0;
    expect((await pass(parsed)).written).toEqual([]);
    expect(reads).toEqual([join(dir, "alice.yaml"), join(dir, "alice.md")]);

    reads.length = 0;
    expect(await pass(parsed)).toMatchObject({ written: [], removed: [], problems: [] });
    expect(reads).toEqual([]);

    await tick();
    await writeFile(join(dir, "bob.yaml"), "name: bob\nmodel: m2\n");
    reads.length = 0;
    expect((await pass(parsed)).written).toEqual(["bob"]);
    expect(registry.get("bob")?.definition.model).toBe("m2");
    expect(reads).toEqual([join(dir, "bob.yaml")]);

    await tick();
    await writeFile(join(dir, "alice.md"), "You are Alice!");
    expect((await pass(parsed)).written).toEqual(["alice"]);
    expect(registry.get("alice")?.definition.prompt?.system).toBe("You are Alice!");

    // An editor's save or a ConfigMap update: a new file renamed over the old one.
    await writeFile(join(dir, "bob.tmp"), "name: bob\nmodel: m3\n");
    await rename(join(dir, "bob.tmp"), join(dir, "bob.yaml"));
    expect((await pass(parsed)).written).toEqual(["bob"]);
    expect(registry.get("bob")?.definition.model).toBe("m3");

    // A system_file the last read did not stamp: the next pass reads once more, then edits of it are seen.
    await writeFile(join(dir, "bob.md"), "You are Bob.");
    await writeFile(join(dir, "bob.yaml"), "name: bob\nmodel: m3\nprompt:\n  system_file: bob.md\n");
    expect((await pass(parsed)).written).toEqual(["bob"]);
    await pass(parsed);
    reads.length = 0;
    expect((await pass(parsed)).written).toEqual([]);
    expect(reads).toEqual([]);
    await tick();
    await writeFile(join(dir, "bob.md"), "You are Bob!");
    expect((await pass(parsed)).written).toEqual(["bob"]);
    expect(registry.get("bob")?.definition.prompt?.system).toBe("You are Bob!");
  });

  it("reads a file that changed within the settled window on every pass", async () => {
    const parsed: ParsedAgentFiles = new Map();
    await writeFile(join(dir, "carol.yaml"), "name: carol\nmodel: m1\n");
    await syncAgentsDirOnce(registry, dir, parsed);
    reads.length = 0;
    await syncAgentsDirOnce(registry, dir, parsed);
    expect(reads).toContain(join(dir, "carol.yaml"));
  });
});
