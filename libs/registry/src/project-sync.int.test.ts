import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentRegistry } from "./agent-registry.js";
import { syncAgentsOnce } from "./file-sync.js";
import { deleteRegistryBuckets } from "./test/delete-registry-buckets.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

// docs/registry.md "Sources": with a moniro.yaml, the agents it registers are the file agents.
describe("the agents of a project's moniro.yaml synced into the registry", () => {
  const namespace = `t${randomBytes(5).toString("hex")}`;
  let nc: NatsConnection;
  let registry: AgentRegistry;
  let root: string;
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    registry = await AgentRegistry.open(nc, { namespace });
    root = await mkdtemp(join(tmpdir(), "moniro-project-sync-"));
  });
  afterAll(async () => {
    registry.close();
    await deleteRegistryBuckets(nc, namespace);
    await nc.close();
    await rm(root, { recursive: true, force: true });
  });

  it("takes moniro.yaml's agent files and inline agents over the agents directory, removes what it drops and keeps the last good state when it breaks", async () => {
    const agentsDir = join(root, ".agents");
    await mkdir(agentsDir);
    await mkdir(join(root, "team"));
    await writeFile(join(agentsDir, "alice.yaml"), "name: alice\nmodel: m1\n");
    await writeFile(join(root, "team", "carol.yaml"), "name: carol\nmodel: m1\n");

    // No moniro.yaml: the agents directory.
    expect(await syncAgentsOnce(registry, agentsDir, root)).toMatchObject({ written: ["alice"], problems: [] });

    const project = join(root, "moniro.yaml");
    await writeFile(project, "agents:\n  - team/carol.yaml\n  - { name: dave, model: m2, prompt: { system: Hi. } }\n");
    const first = await syncAgentsOnce(registry, agentsDir, root);
    expect(first).toMatchObject({ written: ["carol", "dave"], removed: ["alice"], problems: [], projectFile: project });
    expect(registry.get("dave")).toMatchObject({
      source: "file",
      definition: { model: "m2", prompt: { system: "Hi." } },
    });
    expect(registry.get("carol")?.file).toMatch(/team[/\\]carol\.yaml$/);
    expect((await syncAgentsOnce(registry, agentsDir, root)).written).toEqual([]);

    // Broken (dave is not listed, and a field is misspelt): nothing written or removed.
    await writeFile(project, "agents:\n  - team/carol.yaml\nworkflowz: {}\n");
    const broken = await syncAgentsOnce(registry, agentsDir, root);
    expect(broken).toMatchObject({ written: [], removed: [] });
    expect(broken.problems).toEqual([expect.stringMatching(/moniro\.yaml: .*workflowz.*last good state/s)]);
    expect(registry.names().sort()).toEqual(["carol", "dave"]);

    // A listed agent file that does not exist is named with the fix.
    await writeFile(project, "agents:\n  - team/erin.yaml\n");
    const missing = await syncAgentsOnce(registry, agentsDir, root);
    expect(missing.problems).toEqual([expect.stringMatching(/agents\.0: team\/erin\.yaml does not exist/)]);

    await writeFile(project, "agents:\n  - team/carol.yaml\n");
    expect(await syncAgentsOnce(registry, agentsDir, root)).toMatchObject({ removed: ["dave"], problems: [] });
    expect(registry.names()).toEqual(["carol"]);
  });
});
