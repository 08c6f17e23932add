import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentRegistry, deleteRegistryBuckets, syncAgentsOnce } from "@moniro/registry";
import { randomToken } from "@moniro/store/test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPoliciesFromRegistry } from "./registry-policies.js";
import { TEST_NATS_URL } from "./test/executor-fixture.js";

// docs/registry.md "Changes while agents run": the executor's tool policy is the registry's, as the runner's definition is.
describe("the tool policy of agents defined in a project's moniro.yaml", () => {
  const namespace = randomToken("tp");
  let nc: NatsConnection;
  let gatewaySide: AgentRegistry;
  let root: string;
  let agentsDir: string;
  beforeAll(async () => {
    nc = await connect({ servers: TEST_NATS_URL });
    gatewaySide = await AgentRegistry.open(nc, { namespace });
    root = await mkdtemp(join(tmpdir(), "moniro-policies-"));
    agentsDir = join(root, ".agents");
    await mkdir(agentsDir);
  });
  afterAll(async () => {
    gatewaySide.close();
    await deleteRegistryBuckets(await jetstreamManager(nc), namespace);
    await nc.close();
    await rm(root, { recursive: true, force: true });
  });

  it("is the definition the project registers; an agents-directory file it does not register gives no tools; a dropped agent is refused as deleted", async () => {
    // bob.yaml sits in the agents directory, but moniro.yaml (which replaces that directory as the source) does not list it.
    await writeFile(join(agentsDir, "bob.yaml"), "name: bob\nmodel: m1\n");
    await writeFile(join(agentsDir, "alice.yaml"), "name: alice\nmodel: m1\ntools: { profile: coding }\n");
    const project = join(root, "moniro.yaml");
    await writeFile(
      project,
      "agents:\n  - .agents/alice.yaml\n  - { name: dave, model: m1, prompt: { system: Hi. }, tools: { profile: readonly } }\n",
    );
    expect(await syncAgentsOnce(gatewaySide, agentsDir, root)).toMatchObject({
      written: ["alice", "dave"],
      problems: [],
    });

    const executorSide = await AgentRegistry.open(nc, { namespace });
    try {
      const policies = agentPoliciesFromRegistry(executorSide);
      expect(await policies.lookup("dave")).toMatchObject({ ok: true, policy: { label: "profile 'readonly'" } });
      expect(await policies.lookup("alice")).toMatchObject({ ok: true, policy: { label: "profile 'coding'" } });
      // The runner does not run bob (no definition), and the executor runs no tool as bob either.
      expect(await policies.lookup("bob")).toEqual({
        ok: false,
        errorCode: "unknown-agent",
        message: expect.stringMatching(
          /Unknown agent 'bob': the agent registry holds no definition of it.*moniro\.yaml/,
        ),
      });

      // alice dropped from moniro.yaml: her record goes, and her file in the agents directory does not bring her tools back.
      await writeFile(project, "agents:\n  - { name: dave, model: m1, prompt: { system: Hi. } }\n");
      expect(await syncAgentsOnce(gatewaySide, agentsDir, root)).toMatchObject({ removed: ["alice"], problems: [] });
      await expect.poll(() => executorSide.get("alice")).toBeUndefined();
      expect(await policies.lookup("alice")).toMatchObject({
        ok: false,
        errorCode: "unknown-agent",
        message: expect.stringMatching(/^Agent 'alice' was deleted at /),
      });
      // dave's new revision (tools dropped) applies to the next call.
      await expect
        .poll(async () => ((await policies.lookup("dave")) as { policy?: { label: string } }).policy?.label)
        .toBe("profile 'full'");
    } finally {
      executorSide.close();
    }
  });

  it("warns once when an agent's policy gives its commands the network, and again only after it was taken away", async () => {
    await gatewaySide.put("net", { model: "m1", tools: { network: true } }, { source: "api" });
    const executorSide = await AgentRegistry.open(nc, { namespace });
    const warnings: Array<Record<string, unknown>> = [];
    try {
      const policies = agentPoliciesFromRegistry(executorSide, { warn: (fields) => warnings.push(fields) });
      expect(await policies.lookup("net")).toMatchObject({ ok: true, policy: { network: true } });
      await policies.lookup("net");
      expect(warnings).toEqual([{ agent: "net", revision: expect.any(Number) }]);

      await gatewaySide.put("net", { model: "m1" }, { source: "api" });
      await expect
        .poll(async () => ((await policies.lookup("net")) as { policy?: { network: boolean } }).policy?.network)
        .toBe(false);
      await gatewaySide.put("net", { model: "m1", tools: { network: true } }, { source: "api" });
      await expect
        .poll(async () => ((await policies.lookup("net")) as { policy?: { network: boolean } }).policy?.network)
        .toBe(true);
      expect(warnings).toHaveLength(2);
    } finally {
      executorSide.close();
    }
  });
});
