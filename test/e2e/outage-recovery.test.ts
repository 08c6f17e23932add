import { afterEach, describe, expect, it } from "vitest";
import { messagesSeen, waitForEvent, waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { freePort } from "../support/ports.js";
import { type PrivateServer, privateNats, privateRedis } from "../support/private-servers.js";
import { openSse } from "../support/sse.js";
import {
  printServiceLogsOnFailure,
  type RunningService,
  SERVICES,
  type ServiceName,
  type Stack,
  startStack,
} from "../support/stack.js";

// Issue 2, "Bad input": NATS or Redis unreachable at start — the service says
// which, retries with backoff instead of crashing, and /readyz reports it.
// Here the server then appears on the configured port (a private one this test
// starts): every service must get ready on its own and the stack must answer a
// DM, which proves the retrying, not only the staying up.
//
// And "nothing accepted is ever lost" when Redis or NATS restarts while the
// stack runs (restarted on the same port with its data kept): every message
// the gateway accepted is answered once; what it could not store it refused.

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

// Each test's stack, private server and fake model, torn down after it.
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
// Registered after the teardown, so it runs before it (after-hooks run in reverse order).
printServiceLogsOnFailure(() => stack);

/**
 * Starts the fake model and a stack of one agent whose NATS or Redis URL is
 * `url` (a private server's port); `services: []` starts none of the services.
 */
async function stackOn(
  agent: string,
  dependency: "MONIRO_REDIS_URL" | "MONIRO_NATS_URL",
  url: string,
  options: { services?: [] } = {},
): Promise<{ model: Model; stack: Stack }> {
  model = await startModel();
  stack = await startStack({
    ...options,
    agents: { [agent]: testAgentYaml(agent) },
    env: { [dependency]: url, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key" },
  });
  return { model, stack };
}

/** The model answers each DM of `agent` with one `message` call, then ends its turn. */
function answerEach(model: Model, agent: string, replies: readonly string[]): void {
  for (const text of replies) {
    model.script(agent, toolUseReply({ name: "message", input: { text } }), textReply("Done."));
  }
}

describe("a dependency that is down at start, then comes up", () => {
  it("Redis: the services that use it wait, say Redis is unreachable, then get ready and serve a DM", async () => {
    const port = await freePort();
    const { model, stack } = await stackOn("erin", "MONIRO_REDIS_URL", `redis://127.0.0.1:${port}`, { services: [] });
    const started = await Promise.all(SERVICES.map((name) => stack.start(name, {}, { waitReady: false })));
    const users = started.filter((service) => REDIS_USERS.includes(service.name as ServiceName));

    await expectWaitingFor(users, /redis/i);
    server = privateRedis(port);
    await server.start();
    await expectRecovers(started);
    await expectDmAnswered(stack, model, "erin");
    // The private Redis is thrown away whole; nothing of this test is left on the shared one.
  });

  it("NATS: every service waits, says NATS is unreachable, then provisions its streams and serves a DM", async () => {
    const port = await freePort();
    const { model, stack } = await stackOn("frank", "MONIRO_NATS_URL", `nats://127.0.0.1:${port}`, { services: [] });
    const started = await Promise.all(SERVICES.map((name) => stack.start(name, {}, { waitReady: false })));

    await expectWaitingFor(started, /nats/i);
    server = privateNats(port);
    await server.start();
    await expectRecovers(started);
    await expectDmAnswered(stack, model, "frank");
  });
});

describe("a dependency that restarts while the stack runs", () => {
  it("Redis: a DM accepted while Redis is down is answered once it is back, exactly once, in order", async () => {
    const redis = privateRedis(await freePort(), { persistent: true });
    server = redis;
    await redis.start();
    const { model, stack } = await stackOn("gina", "MONIRO_REDIS_URL", redis.url);
    answerEach(model, "gina", ["Reply one.", "Reply two.", "Reply three."]);
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("gina"));
    try {
      const first = await gateway.send("gina", "one", "hal");
      await waitForMessage(sse, { to: "http:hal", text: "Reply one." });
      // Down once the agent is at rest: the cycle's last step (after the message) writes to Redis too.
      await waitForEvent(sse, "state-changed", (event) => event.data.state === "idle");

      await redis.stop();
      // The gateway stores a DM in JetStream, which does not need Redis: accepted.
      const second = await gateway.send("gina", "two", "hal");
      expect(second.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // the runner tries, fails, and will retry
      await redis.start();

      const replyTwo = await waitForMessage(sse, { to: "http:hal", text: "Reply two." }, 30_000);
      expect(replyTwo.inReplyTo).toBe(second.body.id);
      await expectRecovers(stack.running.filter((service) => service.process.exitCode === null));
      const third = await gateway.send("gina", "three", "hal");
      await waitForMessage(sse, { to: "http:hal", text: "Reply three." });

      const replies = messagesSeen(sse).map((message) => message.text);
      expect(replies).toEqual(["Reply one.", "Reply two.", "Reply three."]);
      const inputs = (await gateway.thread("gina")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([first.body.id, second.body.id, third.body.id]);
    } finally {
      await sse.close();
    }
  });

  it("NATS: while it is down a DM is refused (503), never silently accepted; after it returns DMs are answered and none twice", async () => {
    const nats = privateNats(await freePort());
    server = nats;
    await nats.start();
    const { model, stack } = await stackOn("ivan", "MONIRO_NATS_URL", nats.url);
    answerEach(model, "ivan", ["Reply one.", "Reply two."]);
    const gateway = gatewayClient(stack.gatewayUrl);
    let sse = await openSse(gateway.eventsUrl("ivan"));
    try {
      const first = await gateway.send("ivan", "one", "jo");
      await waitForMessage(sse, { to: "http:jo", text: "Reply one." });
      await waitForEvent(sse, "state-changed", (event) => event.data.state === "idle");
      await sse.close();

      await nats.stop();
      const refused = await gateway.send("ivan", "lost?", "jo");
      expect(refused.status).toBe(503);
      expect(refused.text).toMatch(/not accepted|nats|jetstream/i);

      await nats.start();
      await expectRecovers(stack.running.filter((service) => service.process.exitCode === null));
      sse = await openSse(gateway.eventsUrl("ivan"));
      const second = await eventually(async () => {
        const reply = await gateway.send("ivan", "two", "jo");
        return reply.status === 202 ? reply : undefined;
      }, "the gateway to accept DMs again");
      const replyTwo = await waitForMessage(sse, { to: "http:jo", text: "Reply two." }, 30_000);
      expect(replyTwo.inReplyTo).toBe(second.body.id);

      const inputs = (await gateway.thread("ivan")).filter((entry) => entry.kind === "input");
      expect(inputs.map((entry) => entry.envelopeId)).toEqual([first.body.id, second.body.id]);
      expect(model.served("ivan").filter((kind) => kind === "tool_use")).toHaveLength(2);
    } finally {
      await sse.close();
    }
  });
});
