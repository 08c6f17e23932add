import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentRegistry } from "./agent-registry.js";
import { type ParsedAgentFiles, syncAgentsDir, syncAgentsDirOnce } from "./file-sync.js";
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

/** Turns of the event loop (counted by a setImmediate chain while `counting`) as each file's stat saw them. */
const loop = vi.hoisted(() => ({ counting: false, turns: 0, atStat: [] as number[] }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    statSync: ((...args: Parameters<typeof fs.statSync>) => {
      if (loop.counting) loop.atStat.push(loop.turns);
      return fs.statSync(...args);
    }) as typeof fs.statSync,
  };
});

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
/** More than one tick of the kernel's coarse file clock (≤ 10 ms), so a write gets a new mtime and ctime. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

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

  it("reports a file with an alias to no anchor, or one that cannot be read, and syncs the others", async () => {
    const mixed = join(dir, "mixed");
    await mkdir(mixed);
    await writeFile(join(mixed, "gus.yaml"), "name: gus\nmodel: *m\n");
    await mkdir(join(mixed, "hal.yaml"));
    await writeFile(join(mixed, "ivy.yaml"), "name: ivy\nmodel: m1\n");
    const report = await syncAgentsDirOnce(registry, mixed, new Map());
    expect(report.written).toEqual(["ivy"]);
    expect(report.problems).toEqual([
      expect.stringMatching(/gus\.yaml: not valid YAML: Unresolved alias/),
      expect.stringMatching(/hal\.yaml: cannot be read \(EISDIR/),
    ]);
    expect(registry.get("gus")).toBeUndefined();
  });

  it("logs a first pass that fails (the registry not answering) and syncs at the next pass, instead of failing its caller", async () => {
    const later = join(dir, "later");
    await mkdir(later);
    await writeFile(join(later, "jay.yaml"), "name: jay\nmodel: m1\n");
    let refusals = 1;
    const flaky = new Proxy(registry, {
      get(target, key, receiver) {
        if (key !== "put") return Reflect.get(target, key, receiver);
        return (...args: Parameters<AgentRegistry["put"]>) => {
          if (refusals-- > 0) return Promise.reject(new Error("TIMEOUT: the KV bucket did not answer"));
          return target.put(...args);
        };
      },
    });
    const errors: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const logger = {
      info: () => undefined,
      warn: () => undefined,
      error: (fields: Record<string, unknown>, message: string) => errors.push({ fields, message }),
    };
    const sync = await syncAgentsDir(flaky, later, { logger, everyMs: 100 });
    try {
      expect(sync.first).toBeUndefined();
      expect(errors).toEqual([
        {
          fields: expect.objectContaining({ err: "TIMEOUT: the KV bucket did not answer" }),
          message: "agents directory sync failed; retrying",
        },
      ]);
      await vi.waitFor(() => expect(registry.get("jay")?.definition.model).toBe("m1"), { timeout: 3_000 });
    } finally {
      sync.close();
    }
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
    expect(missing.problems).toEqual([]);
    expect(registry.get("alice")).toBeDefined();
    // A file given as the directory is named as such, not called missing.
    await writeFile(join(dir, "not-a-dir"), "");
    const file = await syncAgentsDirOnce(registry, join(dir, "not-a-dir"));
    expect(file.problems).toEqual([
      expect.stringMatching(
        /not-a-dir: is a file, not a directory: point MONIRO_AGENTS_DIR at the directory of <name>\.yaml files$/,
      ),
    ]);
    expect(registry.get("alice")).toBeDefined();
  });

  describe("the periodic pass over agent files that did not change", () => {
    let stamped: string;
    beforeAll(async () => {
      stamped = join(dir, "stamped");
      await mkdir(stamped);
    });
    // Stamps trusted at once (settledMs 0); the default window is file-stamp.test.ts's.
    const pass = (parsed: ParsedAgentFiles) => syncAgentsDirOnce(registry, stamped, parsed, { settledMs: 0 });

    it("reads no file of an unchanged agent, yet sees a same-size edit, a system_file edit, a rename over the file and a system_file added later", async () => {
      const parsed: ParsedAgentFiles = new Map();
      await writeFile(join(stamped, "dana.yaml"), "name: dana\nmodel: m1\nprompt:\n  system_file: dana.md\n");
      await writeFile(join(stamped, "dana.md"), "You are Dana.");
      await writeFile(join(stamped, "erin.yaml"), "name: erin\nmodel: m1\n");
      expect((await pass(parsed)).written).toEqual(["dana", "erin"]);
      // dana's system_file was not stamped before its first read: one more read stamps it.
      reads.length = 0;
      expect((await pass(parsed)).written).toEqual([]);
      expect(reads).toEqual([join(stamped, "dana.yaml"), join(stamped, "dana.md")]);

      reads.length = 0;
      expect(await pass(parsed)).toMatchObject({ written: [], removed: [], problems: [] });
      expect(reads).toEqual([]);

      await tick();
      await writeFile(join(stamped, "erin.yaml"), "name: erin\nmodel: m2\n");
      reads.length = 0;
      expect((await pass(parsed)).written).toEqual(["erin"]);
      expect(registry.get("erin")?.definition.model).toBe("m2");
      expect(reads).toEqual([join(stamped, "erin.yaml")]);

      await tick();
      await writeFile(join(stamped, "dana.md"), "You are Dana!");
      expect((await pass(parsed)).written).toEqual(["dana"]);
      expect(registry.get("dana")?.definition.prompt?.system).toBe("You are Dana!");

      // An editor's save or a ConfigMap update: a new file renamed over the old one.
      await writeFile(join(stamped, "erin.tmp"), "name: erin\nmodel: m3\n");
      await rename(join(stamped, "erin.tmp"), join(stamped, "erin.yaml"));
      expect((await pass(parsed)).written).toEqual(["erin"]);
      expect(registry.get("erin")?.definition.model).toBe("m3");

      // A system_file the last read did not stamp: the next pass reads once more, then edits of it are seen.
      await writeFile(join(stamped, "erin.md"), "You are Erin.");
      await writeFile(join(stamped, "erin.yaml"), "name: erin\nmodel: m3\nprompt:\n  system_file: erin.md\n");
      expect((await pass(parsed)).written).toEqual(["erin"]);
      await pass(parsed);
      reads.length = 0;
      expect((await pass(parsed)).written).toEqual([]);
      expect(reads).toEqual([]);
      await tick();
      await writeFile(join(stamped, "erin.md"), "You are Erin!");
      expect((await pass(parsed)).written).toEqual(["erin"]);
      expect(registry.get("erin")?.definition.prompt?.system).toBe("You are Erin!");
    });

    it("lets the event loop turn during a pass over many files, and sees a change to any of them", async () => {
      const many = join(dir, "many");
      await mkdir(many);
      const names = Array.from({ length: 250 }, (_, i) => `m${String(i).padStart(3, "0")}`);
      await Promise.all(names.map((name) => writeFile(join(many, `${name}.yaml`), `name: ${name}\nmodel: m1\n`)));
      const parsed: ParsedAgentFiles = new Map();
      const manyPass = () => syncAgentsDirOnce(registry, many, parsed, { settledMs: 0 });
      expect((await manyPass()).written).toHaveLength(250);

      // An unchanged file costs a stat and no I/O wait: without turns of the loop a pass would hold it throughout.
      const count = () => {
        loop.turns++;
        if (loop.counting) setImmediate(count);
      };
      loop.counting = true;
      loop.atStat.length = 0;
      setImmediate(count);
      reads.length = 0;
      const unchanged = await manyPass();
      loop.counting = false;
      expect(unchanged).toMatchObject({ written: [], removed: [], problems: [] });
      expect(reads).toEqual([]);
      // 250 stats, in three runs (100 files each at most) with turns of the loop between them.
      expect(loop.atStat).toHaveLength(250);
      expect(new Set(loop.atStat).size).toBeGreaterThanOrEqual(3);

      await tick();
      await writeFile(join(many, "m242.yaml"), "name: m242\nmodel: m2\n");
      expect((await manyPass()).written).toEqual(["m242"]);
      expect(registry.get("m242")?.definition.model).toBe("m2");
    });

    it("reads a file that changed within the settled window on every pass", async () => {
      const parsed: ParsedAgentFiles = new Map();
      await writeFile(join(stamped, "fay.yaml"), "name: fay\nmodel: m1\n");
      await syncAgentsDirOnce(registry, stamped, parsed);
      reads.length = 0;
      await syncAgentsDirOnce(registry, stamped, parsed);
      expect(reads).toContain(join(stamped, "fay.yaml"));
    });
  });
});
