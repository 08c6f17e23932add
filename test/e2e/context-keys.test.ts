import { createSubjects, dlqRecordSchema, stamp, validate } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { testClient } from "@moniro/store/test";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForMessage } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { openSse } from "../support/sse.js";
import { NATS_URL, printServiceLogsOnFailure, type Stack } from "../support/stack.js";

// A context once formed another key of the agent: `personal:meta` was the
// meta hash of the thread `personal`, so a per-context agent sent it went to
// `error` (WRONGTYPE) for good and GET …/thread?context=personal:envelopes
// answered 503. Now such a context is refused where it enters, and the
// agent keeps answering.

const RULE = /context.*must be 'personal' or '<workflow>:<tag>'/;

describe("contexts that look like internal keys", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;
  let nc: NatsConnection;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { multi: testAgentYaml("multi", { extra: { threads: "per-context" } }) },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await model?.close();
  });

  it("are refused at the gateway (400 naming the rule) and on NATS (DLQ with the reason), and the agent keeps answering", async () => {
    for (const context of ["personal:meta", "personal:envelopes"]) {
      const posted = await gateway.request("POST", "/v1/agents/multi/messages", { text: "hi", from: "eve", context });
      expect(posted.status, context).toBe(400);
      expect(posted.text, context).toMatch(RULE);
    }

    const subjects = createSubjects(stack.namespace);
    const dlq = nc.subscribe(subjects.dlqAll);
    const records: unknown[] = [];
    void (async () => {
      for await (const message of dlq) records.push(message.json());
    })();
    await nc.flush();
    const forged = JSON.stringify({
      ...stamp(),
      agent: "multi",
      source: "http:eve",
      context: "personal:envelopes",
      text: "collide",
    });
    await jetstream(nc).publish(subjects.in("multi"), forged);
    const record = await eventually(
      () =>
        records
          .map((raw) => validate(dlqRecordSchema, raw, "DLQ record"))
          .find((decoded) => decoded.ok && decoded.value.payload === forged),
      "the DLQ record of the envelope with context personal:envelopes",
    );
    dlq.unsubscribe();
    if (!record.ok) throw record.error;
    expect(record.value.issues.map((issue) => issue.path)).toContain("context");
    expect(JSON.stringify(record.value)).toMatch(RULE);

    // Later DMs, in the personal context and in a workspace context, are answered. Inputs in a
    // workspace context are taken only for a member of a running instance: proj:dev is started here.
    const redis = testClient(stack.redis.url);
    try {
      await new RedisWorkspaceStore(redis, { prefix: stack.prefix })
        .instance("proj", "dev")
        .start([{ name: "multi", agent: "multi", kind: "ref" }]);
    } finally {
      redis.disconnect();
    }
    const sse = await openSse(gateway.eventsUrl("multi"));
    try {
      model.script(
        "multi",
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Still answering." } }),
        textReply("ok"),
        toolUseReply({ name: "message", input: { to: "http:bob", text: "Answering in proj:dev too." } }),
        textReply("ok"),
      );
      expect((await gateway.send("multi", "Are you stuck?")).status).toBe(202);
      await waitForMessage(sse, { to: "http:bob", text: "Still answering." });
      const inWorkspace = await gateway.request("POST", "/v1/agents/multi/messages", {
        text: "And here?",
        from: "bob",
        context: "proj:dev",
      });
      expect(inWorkspace.status, inWorkspace.text).toBe(202);
      await waitForMessage(sse, { to: "http:bob", text: "Answering in proj:dev too." });
    } finally {
      await sse.close();
    }
    const [first] = model.requests("multi");
    expect(userTexts(first?.body ?? { model: "", messages: [] })).toEqual(["[http:bob] Are you stuck?"]);
    await eventually(async () => (await gateway.status("multi")).state === "idle", "multi to be idle, not in error");
  });

  it("GET …/thread?context=personal:envelopes answers 400 naming the rule; a real workspace thread reads", async () => {
    for (const context of ["personal:envelopes", "personal:meta", "a:b:c"]) {
      const reply = await gateway.threadPage("multi", `?context=${encodeURIComponent(context)}`);
      expect(reply.status, context).toBe(400);
      expect(reply.text, context).toMatch(RULE);
    }
    const workspace = await gateway.threadPage<{ entries: Array<{ kind: string; text?: string }> }>(
      "multi",
      "?context=proj:dev",
    );
    expect(workspace.status).toBe(200);
    expect(workspace.body.entries.filter((entry) => entry.kind === "input").map((entry) => entry.text)).toEqual([
      "And here?",
    ]);
  });
});
