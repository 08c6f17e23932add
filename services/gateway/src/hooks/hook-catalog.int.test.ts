import { randomBytes } from "node:crypto";
import { AgentRegistry, deleteRegistryBuckets } from "@moniro/registry";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registryHookCatalog } from "../agents/registry-catalog.js";
import { RegistryLink } from "../agents/registry-link.js";
import { TEST_NATS_URL } from "../test/gateway-fixture.js";
import { isBroken } from "./hook-catalog.js";

function recordingLogger() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, fields, message });
  };
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

const SECRET = "a-secret-of-enough-length";

describe("webhooks from the agent registry", () => {
  let nc: NatsConnection;
  let registry: AgentRegistry;
  let link: RegistryLink;
  let namespace: string;
  beforeEach(async () => {
    namespace = `t${randomBytes(5).toString("hex")}`;
    nc = await connect({ servers: TEST_NATS_URL });
    registry = await AgentRegistry.open(nc, { namespace });
    link = new RegistryLink();
    link.set(registry);
  });
  afterEach(async () => {
    registry.close();
    await deleteRegistryBuckets(await jetstreamManager(nc), namespace);
    await nc.close();
  });

  it("serves each agent's hooks with their secrets from the environment, and logs 'auth: none' as an opt-out", async () => {
    await registry.put(
      "ops",
      {
        model: "m",
        webhooks: {
          gh: { auth: "github", secret_env: "GH" },
          ci: { auth: "bearer", token_env: "CI", priority: "immediate" },
          open: { auth: "none" },
        },
      },
      { source: "api" },
    );
    const { lines, logger } = recordingLogger();
    const catalog = registryHookCatalog(link, { env: { GH: SECRET, CI: SECRET }, logger });
    expect(await catalog.get("gh")).toMatchObject({
      agent: "ops",
      priority: "background",
      auth: { kind: "github", secret: SECRET },
    });
    expect(await catalog.get("ci")).toMatchObject({ priority: "immediate", auth: { kind: "bearer", token: SECRET } });
    expect(await catalog.get("open")).toMatchObject({ auth: { kind: "none" } });
    expect(await catalog.get("nope")).toBeUndefined();
    expect(lines.find((line) => line.level === "warn")).toMatchObject({
      fields: { hook: "open" },
      message: expect.stringMatching(/auth: none.*explicit opt-out/),
    });
  });

  it("a missing or short secret and a name defined twice make the hook unusable, logged with agent, field and fix", async () => {
    await registry.put(
      "alice",
      { model: "m", webhooks: { gh: { auth: "github", secret_env: "UNSET" }, dup: { auth: "none" } } },
      { source: "file", file: ".agents/alice.yaml" },
    );
    await registry.put(
      "bob",
      { model: "m", webhooks: { short: { auth: "hmac", secret_env: "SHORT" }, dup: { auth: "none" } } },
      { source: "api" },
    );
    const { lines, logger } = recordingLogger();
    const catalog = registryHookCatalog(link, { env: { SHORT: "tiny" }, logger });
    for (const name of ["gh", "short", "dup"]) {
      const hook = await catalog.get(name);
      expect(hook && isBroken(hook), name).toBe(true);
    }
    const problems = lines.filter((line) => line.level === "error").map((line) => String(line.fields.problem));
    expect(problems).toHaveLength(3);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^\.agents\/alice\.yaml: webhooks\.gh\.secret_env: environment variable UNSET is not set .*: set it/,
        ),
        expect.stringMatching(
          /^registry:bob: webhooks\.dup: hook 'dup' is also defined in \.agents\/alice\.yaml: hook names are global, rename one/,
        ),
        expect.stringMatching(
          /^registry:bob: webhooks\.short\.secret_env: environment variable SHORT holds fewer than 16 characters/,
        ),
      ]),
    );
  });

  it("finds a hook added while it runs, and drops one removed", async () => {
    await registry.put("ops", { model: "m" }, { source: "api" });
    const { logger } = recordingLogger();
    const catalog = registryHookCatalog(link, { env: {}, logger });
    expect(await catalog.get("later")).toBeUndefined();
    await registry.put("ops", { model: "m", webhooks: { later: { auth: "none" } } }, { source: "api" });
    expect(await catalog.get("later")).toMatchObject({ agent: "ops" });
    await registry.put("ops", { model: "m" }, { source: "api" });
    expect(await catalog.get("later")).toBeUndefined();
  });
});
