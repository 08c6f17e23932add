import { afterEach, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateNats, privateRedis } from "../support/private-servers.js";
import { openSse } from "../support/sse.js";
import { type RunningService, SERVICES, type ServiceName, type Stack, startStack } from "../support/stack.js";

// Issue 2, "Bad input": NATS or Redis unreachable at start — the service says
// which, retries with backoff instead of crashing, and /readyz reports it.
// Here the server then appears on the configured port (a private one this test
// starts): every service must get ready on its own and the stack must answer a
// DM, which proves the retrying, not only the staying up.

/** The services that talk to Redis (signal-bridge does not). */
const REDIS_USERS: readonly ServiceName[] = ["gateway", "agent-runner", "tool-executor", "scheduler"];

async function readyz(service: RunningService): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${service.port}/readyz`);
  return { status: response.status, text: await response.text() };
}

/** pino JSON lines at warn (40) or above that mention `what`. */
function warnsAbout(service: RunningService, what: RegExp): boolean {
  return service.output
    .join("")
    .split("\n")
    .some((line) => {
      try {
        const level = (JSON.parse(line) as { level?: unknown }).level;
        return typeof level === "number" && level >= 40 && what.test(line);
      } catch {
        return false;
      }
    });
}

/** Each service: up, not ready, /readyz naming `what`, a warning naming `what`; still so after retry rounds. */
async function expectWaitingFor(services: RunningService[], what: RegExp): Promise<void> {
  for (const service of services) {
    const reply = await eventually(() => readyz(service), `${service.name}'s /readyz to answer`);
    expect(reply.status, `${service.name} /readyz`).toBe(503);
    expect(reply.text, `${service.name} /readyz body`).toMatch(what);
    await eventually(() => warnsAbout(service, what), `${service.name} to warn that ${what.source} is unreachable`);
  }
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  for (const service of services) {
    expect(service.process.exitCode, `${service.name} exited:\n${service.output.join("")}`).toBeNull();
    expect((await readyz(service)).status, `${service.name} /readyz`).toBe(503);
  }
}

async function expectRecovers(services: RunningService[]): Promise<void> {
  for (const service of services) {
    await eventually(
      async () => (await readyz(service)).status === 200,
      `${service.name} to become ready once the server is up`,
      20_000,
      100,
    );
  }
}

async function expectDmAnswered(stack: Stack, model: Model, agent: string): Promise<void> {
  const gateway = gatewayClient(stack.gatewayUrl);
  const sse = await openSse(gateway.eventsUrl(agent));
  try {
    model.script(agent, toolUseReply({ name: "message", input: { text: "Back online." } }), textReply("Done."));
    const posted = await gateway.send(agent, "Are you there?", "dana");
    expect(posted.status).toBe(202);
    const message = await waitForMessage(sse, { to: "http:dana", text: "Back online." });
    expect(message.inReplyTo).toBe(posted.body.id);
  } finally {
    await sse.close();
  }
}

describe("a dependency that is down at start, then comes up", () => {
  let model: Model | undefined;
  let stack: Stack | undefined;
  let server: PrivateServer | undefined;

  afterEach(async () => {
    await stack?.stop();
    await server?.destroy();
    await model?.close();
    stack = undefined;
    server = undefined;
    model = undefined;
  });

  it("Redis: the services that use it wait, say Redis is unreachable, then get ready and serve a DM", async () => {
    model = await startModel();
    const port = await freePort();
    stack = await startStack({
      services: [],
      agents: { erin: testAgentYaml("erin") },
      env: {
        MONIRO_REDIS_URL: `redis://127.0.0.1:${port}`,
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: "e2e-test-key",
      },
    });
    const current = stack;
    const started = await Promise.all(SERVICES.map((name) => current.start(name, {}, { waitReady: false })));
    const users = started.filter((service) => REDIS_USERS.includes(service.name as ServiceName));

    await expectWaitingFor(users, /redis/i);
    server = privateRedis(port);
    await server.start();
    await expectRecovers(started);
    await expectDmAnswered(stack, model, "erin");
    // The private Redis is thrown away whole; nothing of this test is left on the shared one.
  });

  it("NATS: every service waits, says NATS is unreachable, then provisions its streams and serves a DM", async () => {
    model = await startModel();
    const port = await freePort();
    stack = await startStack({
      services: [],
      agents: { frank: testAgentYaml("frank") },
      env: {
        MONIRO_NATS_URL: `nats://127.0.0.1:${port}`,
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: "e2e-test-key",
      },
    });
    const current = stack;
    const started = await Promise.all(SERVICES.map((name) => current.start(name, {}, { waitReady: false })));

    await expectWaitingFor(started, /nats/i);
    server = privateNats(port);
    await server.start();
    await expectRecovers(started);
    await expectDmAnswered(stack, model, "frank");
  });
});
