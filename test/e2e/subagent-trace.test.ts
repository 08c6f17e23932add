import { eventEnvelopeSchema, validate } from "@moniro/envelopes";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvent } from "../support/agent-events.js";
import { testAgentYaml } from "../support/agents.js";
import { eventually } from "../support/eventually.js";
import { gatewayClient } from "../support/gateway-client.js";
import { type Model, textReply, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { openSse } from "../support/sse.js";
import { NATS_URL, type Stack } from "../support/stack.js";

// A child's cycles are tied to the parent's `subagent` call: in traces (under
// its tool span, with the call id as an attribute) and in events (parent and
// call id in every event of the child; spawned / ended events on the parent).

const CALL_ID = "toolu_subagent_trace_01";

function descendsFrom(span: ReceivedSpan, ancestorId: string, spans: readonly ReceivedSpan[]): boolean {
  let parentId = span.parentSpanId;
  for (let hops = 0; parentId !== "" && hops < 20; hops++) {
    if (parentId === ancestorId) return true;
    parentId = spans.find((candidate) => candidate.spanId === parentId)?.parentSpanId ?? "";
  }
  return false;
}

describe("sub-agent traces and events", () => {
  let model: Model;
  let stack: Stack;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let nc: NatsConnection;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { tracer: testAgentYaml("tracer", { tools: { allow: ["message", "read", "subagent"] } }) },
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
    }));
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await model?.close();
    await otlp?.close();
  });

  it("the child's cycle sits under the parent's subagent tool span; its events name the parent and the call", async () => {
    const namespace = stack.prefix.replace(/:$/, "");
    const childEvents: Array<{ agent: string; type: string; data: Record<string, unknown> }> = [];
    nc.subscribe(`${namespace}.evt.*.*`, {
      callback: (_error, msg) => {
        const event = validate(eventEnvelopeSchema, msg.json(), "event");
        if (event.ok && event.value.agent.startsWith("tracer--")) childEvents.push(event.value);
      },
    });
    await nc.flush();
    const gateway = gatewayClient(stack.gatewayUrl);
    const sse = await openSse(gateway.eventsUrl("tracer"));
    try {
      model.script(
        "tracer",
        toolUseReply({ id: CALL_ID, name: "subagent", input: { task: "trace me" } }),
        textReply("waiting"),
      );
      model.script("child-of:tracer", textReply("traced report"));
      await gateway.send("tracer", "Spawn one and trace it.");
      const spawned = await waitForEvent(sse, "subagent-spawned");
      expect(spawned.data).toMatchObject({ callId: CALL_ID, wait: false });
      const child = String(spawned.data.child);
      expect(child).toMatch(/^tracer--[a-z0-9]{8}$/);
      const ended = await waitForEvent(sse, "subagent-ended");
      expect(ended.data).toMatchObject({ parent: "tracer", child, callId: CALL_ID });

      const started = await eventually(
        () => childEvents.find((event) => event.type === "cycle-started"),
        "the child's cycle-started event",
      );
      expect(started).toMatchObject({ agent: child, data: { parent: "tracer", parentCallId: CALL_ID } });

      const spans = otlp.spans;
      const [toolSpan, childCycle] = await eventually(() => {
        const tool = spans.find(
          (span) => span.name === "execute_tool subagent" && span.attributes["gen_ai.tool.call.id"] === CALL_ID,
        );
        const cycle = spans.find((span) => span.name === "cycle" && span.attributes["moniro.agent"] === child);
        return tool && cycle ? ([tool, cycle] as const) : undefined;
      }, "the parent's tool span and the child's cycle span");
      expect(childCycle.attributes).toMatchObject({ "moniro.parent": "tracer", "moniro.parent.call_id": CALL_ID });
      expect(childCycle.traceId).toBe(toolSpan.traceId);
      expect(descendsFrom(childCycle, toolSpan.spanId, spans)).toBe(true);
    } finally {
      await sse.close();
    }
  });
});
