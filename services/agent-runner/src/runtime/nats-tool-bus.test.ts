import { type Bus, ResponderLostError } from "@moniro/bus";
import type { ToolCallEnvelope } from "@moniro/envelopes";
import { createSubjects, toolCancelEnvelopeSchema, validate } from "@moniro/envelopes";
import { ToolBusError } from "@moniro/ports";
import { FakeClock } from "@moniro/ports/test";
import { describe, expect, it } from "vitest";
import { NatsToolBus } from "./nats-tool-bus.js";

const subjects = createSubjects("tbus");
const clock = new FakeClock({ start: 1_000_000 });

function call(fields: Partial<ToolCallEnvelope> = {}): ToolCallEnvelope {
  return {
    v: 1,
    id: "01JAAAAAAAAAAAAAAAAAAAAAAA",
    ts: new Date(clock.now()).toISOString(),
    callId: "toolu_1",
    agent: "ada",
    context: "personal",
    tool: "exec",
    input: { cmd: "ls" },
    deadlineMs: clock.now() + 30_000,
    ...fields,
  };
}

function messaging(request: Bus["request"]) {
  const published: Array<{ subject: string; payload: unknown }> = [];
  const requests: Array<{ subject: string; payload: unknown; timeoutMs: number; idleMs?: number | undefined }> = [];
  const bus: Pick<Bus, "publish" | "request"> = {
    publish: (subject, payload) => {
      published.push({ subject, payload });
    },
    request: (subject, payload, options) => {
      requests.push({ subject, payload, timeoutMs: options.timeoutMs, idleMs: options.idleMs });
      return request(subject, payload, options);
    },
  };
  return { bus, published, requests };
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const named = (name: string, message = name) => Object.assign(new Error(message), { name });

describe("NatsToolBus", () => {
  it("requests moniro.tool.<name> with a timeout from the deadline and returns the decoded result", async () => {
    const { bus, requests } = messaging(async () =>
      encode({
        v: 1,
        id: "01JBBBBBBBBBBBBBBBBBBBBBBB",
        ts: new Date().toISOString(),
        callId: "toolu_1",
        agent: "ada",
        tool: "exec",
        content: "a.txt",
      }),
    );
    const result = await new NatsToolBus(bus, subjects, { clock, replyGraceMs: 1_000, lostAfterMs: 3_000 }).call(
      call(),
    );
    expect(result).toMatchObject({ callId: "toolu_1", content: "a.txt", isError: false });
    expect(requests).toEqual([{ subject: "tbus.tool.exec", payload: call(), timeoutMs: 31_000, idleMs: 3_000 }]);
  });

  it("turns no responders, a timeout and a closed connection into ToolBusErrors the model can act on", async () => {
    const cases: Array<[Error, string, RegExp]> = [
      [Object.assign(named("RequestError", "503"), { isNoResponders: () => true }), "no_executor", /no tool executor/],
      [named("RequestError", "timeout"), "request_failed", /could not be called/],
      [
        Object.assign(named("RequestError", "wrapped"), { cause: named("TimeoutError") }),
        "executor_lost",
        /may or may not have taken effect/,
      ],
      [named("ClosedConnectionError"), "bus_unavailable", /lost its connection/],
      [new ResponderLostError("tbus.tool.exec", 5_000), "executor_lost", /stopped answering \(no keepalive for 5 s\)/],
    ];
    for (const [thrown, code, message] of cases) {
      const { bus } = messaging(() => Promise.reject(thrown));
      const error = await new NatsToolBus(bus, subjects, { clock }).call(call()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolBusError);
      expect(error).toMatchObject({ code });
      expect((error as Error).message).toMatch(message);
    }
  });

  it("on abort, rejects at once as canceled and publishes moniro.tool.cancel.<callId>", async () => {
    const { bus, published } = messaging(() => new Promise(() => {}));
    const controller = new AbortController();
    const pending = new NatsToolBus(bus, subjects, { clock }).call(call(), { signal: controller.signal });
    controller.abort(new Error("operator canceled"));
    await expect(pending).rejects.toMatchObject({ code: "canceled" });
    expect(published).toHaveLength(1);
    expect(published[0]?.subject).toBe("tbus.tool.cancel.toolu_1");
    const cancel = validate(toolCancelEnvelopeSchema, published[0]?.payload);
    expect(cancel.ok && cancel.value).toMatchObject({ callId: "toolu_1", agent: "ada", reason: "operator canceled" });
  });

  it("refuses a call whose deadline has passed, and an invalid reply", async () => {
    const { bus, requests } = messaging(async () => encode({ nonsense: true }));
    const tools = new NatsToolBus(bus, subjects, { clock });
    await expect(tools.call(call({ deadlineMs: clock.now() - 1 }))).rejects.toMatchObject({ code: "deadline_passed" });
    expect(requests).toHaveLength(0);
    await expect(tools.call(call())).rejects.toMatchObject({ code: "invalid_reply" });
  });
});
