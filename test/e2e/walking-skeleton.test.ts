import { createSubjects, dlqRecordSchema, stamp, validate } from "@moniro/envelopes";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, startModel, textReply, toolUseReply } from "../support/model-script.js";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { freePort } from "../support/ports.js";
import { openSse } from "../support/sse.js";
import { NATS_URL, printServiceLogsOnFailure, SERVICES, type Stack, startStack } from "../support/stack.js";

// Issue 2, "What must be shown — end to end": the five services as processes
// over real NATS and Redis, the fake Anthropic server, one OTLP receiver.

/** Names of the checks a /readyz body reports as failing (any nesting: `{ checks: { nats: "…" } }`). */
function failingChecks(body: unknown, path = ""): string[] {
  if (typeof body !== "object" || body === null) return [];
  return Object.entries(body).flatMap(([key, value]) => {
    const name = path ? `${path}.${key}` : key;
    if (typeof value === "object" && value !== null) return failingChecks(value, name);
    if (key === "ok" || value === "ok" || value === true) return [];
    return [name];
  });
}

/** pino JSON log lines at warn (40) or above. */
function warnings(output: string): string[] {
  return output.split("\n").filter((line) => {
    try {
      const level = (JSON.parse(line) as { level?: unknown }).level;
      return typeof level === "number" && level >= 40;
    } catch {
      return false;
    }
  });
}

describe("walking skeleton", () => {
  let model: Model;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let stack: Stack;
  let nc: NatsConnection;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    model = await startModel();
    otlp = await startOtlpReceiver();
    stack = await startStack({
      agents: { alice: testAgentYaml("alice") },
      env: {
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: "e2e-test-key",
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
    });
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await otlp?.close();
    await model?.close();
  });

  it("a DM reaches the model tagged with its source, its message call comes back on SSE, and the gateway and the runner (which runs message) trace it as one", async () => {
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("alice"));
    try {
      model.script(
        "alice",
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Hi Bob, Alice here." } }),
        textReply("Sent."),
      );

      const posted = await gateway.send("alice", "Hello Alice, are you there?", "bob");
      expect(posted.status).toBe(202);
      expect(posted.body.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);

      const [first] = await model.waitForRequests("alice", 1);
      expect(userTexts(first?.body ?? { model: "", messages: [] })).toContain("[http:bob] Hello Alice, are you there?");
      expect((first?.body.tools ?? []).map((tool) => tool.name)).toContain("message");

      const message = await waitForMessage(sse, { to: "http:bob", text: "Hi Bob, Alice here." });
      expect(message.agent).toBe("alice");
      expect(message.inReplyTo).toBe(posted.body.id);

      // Spans arrive in batches: wait until the gateway's span of this message (it carries the
      // envelope id) has the runner's `execute_tool message` span in its trace. The runner runs
      // `message` itself (docs/tool-executor.md "Where tools run"): no executor span.
      const inTrace = await eventually(() => {
        const published = otlp.spans.find(
          (span) => span.service.includes("gateway") && span.attributes["moniro.envelope.id"] === posted.body.id,
        );
        if (!published) return undefined;
        const spans = otlp.spans.filter((span) => span.traceId === published.traceId);
        const tool = spans.find(
          (span) => span.service.includes("agent-runner") && span.name === "execute_tool message",
        );
        return tool ? spans : undefined;
      }, "the gateway's and the runner's execute_tool message spans of the message in one trace");
      expect(inTrace.some((span) => span.service.includes("gateway"))).toBe(true);
      expect(inTrace.some((span) => span.service.includes("tool-executor"))).toBe(false);
      // The runner counts the calls it runs itself in the series the executor keeps for the others.
      const metrics = await (await fetch(`http://127.0.0.1:${stack.service("agent-runner").port}/metrics`)).text();
      expect(metrics).toMatch(/^moniro_tool_calls_total\{[^}]*tool="message",result="ok"[^}]*\} [1-9]/m);
    } finally {
      await sse.close();
    }
  });

  describe("bad input through the running gateway: a 4xx with a body saying what is wrong", () => {
    it("malformed JSON → 400", async () => {
      const reply = await gatewayClient(stack.gatewayUrl).request(
        "POST",
        "/v1/agents/alice/messages",
        '{"text": "hi",',
      );
      expect(reply.status).toBe(400);
      expect(reply.text).toMatch(/json/i);
    });

    it("a missing field → 400 naming the field", async () => {
      const reply = await gatewayClient(stack.gatewayUrl).request("POST", "/v1/agents/alice/messages", { from: "bob" });
      expect(reply.status).toBe(400);
      expect(reply.text).toMatch(/text/);
    });

    it("an unknown agent → 404 naming the agent", async () => {
      const reply = await gatewayClient(stack.gatewayUrl).send("nobody-here", "hello?");
      expect(reply.status).toBe(404);
      expect(reply.text).toContain("nobody-here");
    });

    it("an oversized body → 413", async () => {
      const reply = await gatewayClient(stack.gatewayUrl).send("alice", "x".repeat(2 * 1024 * 1024));
      expect(reply.status).toBe(413);
      expect(reply.text.length).toBeGreaterThan(0);
    });

    it("no API key or a wrong one → 401, the right one → 202 (a gateway with keys configured)", async () => {
      const secured = await stack.start("gateway", { MONIRO_GATEWAY_OPEN: "false", MONIRO_API_KEYS: "right-key" });
      const url = `http://127.0.0.1:${secured.port}`;
      const none = await gatewayClient(url).send("alice", "hello");
      expect(none.status).toBe(401);
      expect(none.text.length).toBeGreaterThan(0);
      const wrong = await gatewayClient(url, { authorization: "Bearer wrong-key" }).send("alice", "hello");
      expect(wrong.status).toBe(401);
      expect(wrong.text.length).toBeGreaterThan(0);
      model.script("alice", textReply("noted"));
      const asked = model.requests("alice").length;
      const right = await gatewayClient(url, { authorization: "Bearer right-key" }).send("alice", "hello", "keyholder");
      expect(right.status).toBe(202);
      // Let alice finish that one, so the next test's script is hers alone.
      await model.waitForRequests("alice", asked + 1);
      await eventually(
        async () => (await gatewayClient(stack.gatewayUrl).status("alice")).state === "idle",
        "alice to be idle",
      );
      await stack.kill(secured);
    });
  });

  it("an invalid envelope from another system lands on the DLQ with its reason, and the runner serves the next message", async () => {
    const subjects = createSubjects(stack.namespace);
    const dlq = nc.subscribe(subjects.dlqAll);
    const records: unknown[] = [];
    void (async () => {
      for await (const message of dlq) records.push(message.json());
    })();
    await nc.flush();

    const bad = JSON.stringify({ ...stamp(), agent: "alice", source: "not a tag", text: 42 });
    await jetstream(nc).publish(subjects.in("alice"), bad);

    const record = await eventually(
      () =>
        records
          .map((raw) => validate(dlqRecordSchema, raw, "DLQ record"))
          .find((decoded) => decoded.ok && decoded.value.payload === bad),
      "the DLQ record of the invalid envelope",
    );
    dlq.unsubscribe();
    if (!record.ok) throw record.error;
    expect(record.value.subject).toBe(subjects.in("alice"));
    expect(record.value.reason.length).toBeGreaterThan(0);
    expect(record.value.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(["source", "text"]));

    // The consumer kept running: a valid message right after it is answered.
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("alice"));
    try {
      model.script(
        "alice",
        toolUseReply({ name: "message", input: { to: "http:carol", text: "Still here, Carol." } }),
        textReply("Done."),
      );
      expect((await gateway.send("alice", "Still alive?", "carol")).status).toBe(202);
      await waitForMessage(sse, { to: "http:carol", text: "Still here, Carol." });
    } finally {
      await sse.close();
    }
  });

  it("a service started with NATS unreachable stays up, says NATS is down and /readyz reports it", async () => {
    const deadNats = `nats://127.0.0.1:${await freePort()}`;
    const started = await Promise.all(
      SERVICES.map((name) => stack.start(name, { MONIRO_NATS_URL: deadNats }, { waitReady: false })),
    );
    for (const service of started) {
      const readyz = await eventually(async () => {
        const response = await fetch(`http://127.0.0.1:${service.port}/readyz`);
        return { status: response.status, body: (await response.json()) as unknown };
      }, `${service.name}'s /readyz to answer`);
      expect(readyz.status, `${service.name} /readyz`).toBe(503);
      expect(failingChecks(readyz.body), `${service.name} /readyz: ${JSON.stringify(readyz.body)}`).toEqual(
        expect.arrayContaining([expect.stringMatching(/nats/i)]),
      );
      await eventually(
        () => warnings(service.output.join("")).some((line) => /nats/i.test(line)),
        `${service.name} to log (warn or worse) that NATS is down`,
      );
    }
    // Retrying, not crash-looping: still up, still not ready, after several retry rounds.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const service of started) {
      expect(service.process.exitCode, `${service.name} exited:\n${service.output.join("")}`).toBeNull();
      const response = await fetch(`http://127.0.0.1:${service.port}/readyz`);
      expect(response.status, `${service.name} /readyz`).toBe(503);
      await stack.kill(service);
    }
  });
});
