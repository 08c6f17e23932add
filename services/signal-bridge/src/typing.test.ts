import { describe, expect, it } from "vitest";
import { silentLogger } from "./logger.js";
import type { SignalRpc } from "./signal-rpc.js";
import { TypingIndicators } from "./typing.js";

function recordingRpc() {
  const calls: Array<{ method: string; params: Record<string, unknown> }> = [];
  const rpc: SignalRpc = {
    async call(method, params) {
      calls.push({ method, params });
      return {};
    },
  };
  return { rpc, calls };
}

describe("typing indicators follow the agent's work on a Signal input", () => {
  it("start when the input is injected, once per target, and stop when the cycle ends; receipts when configured", () => {
    const { rpc, calls } = recordingRpc();
    const typing = new TypingIndicators({ rpc, logger: silentLogger, readReceipts: true, refreshMs: 60_000 });
    typing.track("E1", { agent: "alice", target: { recipient: "+15550002" }, sender: "+15550002", timestamp: 11 });
    typing.track("E2", { agent: "alice", target: { recipient: "+15550002" }, sender: "+15550002", timestamp: 12 });
    typing.track("E3", { agent: "alice", target: { groupId: "Zz==" }, sender: "+15550003", timestamp: 13 });
    typing.injected("bob", "E1"); // another agent's event for the same id: not ours
    expect(calls).toEqual([]);
    typing.injected("alice", "E1");
    typing.injected("alice", "E2");
    typing.injected("alice", "E3");
    typing.cycleEnded("alice");
    typing.cycleEnded("alice");
    typing.stop();
    expect(calls).toEqual([
      { method: "sendTyping", params: { recipient: "+15550002" } },
      { method: "sendReceipt", params: { recipient: "+15550002", targetTimestamp: 11, type: "read" } },
      { method: "sendReceipt", params: { recipient: "+15550002", targetTimestamp: 12, type: "read" } },
      { method: "sendTyping", params: { groupId: "Zz==" } },
      { method: "sendReceipt", params: { recipient: "+15550003", targetTimestamp: 13, type: "read" } },
      { method: "sendTyping", params: { recipient: "+15550002", stop: true } },
      { method: "sendTyping", params: { groupId: "Zz==", stop: true } },
    ]);
  });

  it("repeats the indicator while the cycle lasts, and a failing daemon is only logged", async () => {
    const calls: string[] = [];
    const rpc: SignalRpc = {
      async call(method) {
        calls.push(method);
        throw new Error("signal-cli down");
      },
    };
    const typing = new TypingIndicators({ rpc, logger: silentLogger, readReceipts: false, refreshMs: 20 });
    typing.track("E1", { agent: "alice", target: { recipient: "+15550002" }, sender: "+15550002", timestamp: 1 });
    typing.injected("alice", "E1");
    await new Promise((r) => setTimeout(r, 70));
    typing.cycleEnded("alice");
    typing.stop();
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls.every((method) => method === "sendTyping")).toBe(true);
  });

  it("stops after the reply the agent sent to that chat is handed to signal-cli, in whichever order the two paths bring them", () => {
    const { rpc, calls } = recordingRpc();
    const typing = new TypingIndicators({ rpc, logger: silentLogger, readReceipts: false, refreshMs: 60_000 });
    const on = (id: string) => {
      typing.track(id, { agent: "alice", target: { recipient: "+15550002" }, sender: "+15550002", timestamp: 1 });
      typing.injected("alice", id);
    };
    const stops = () => calls.filter((call) => call.params.stop === true).length;

    // The cycle ends before the outbound consumer sent the reply: the indicator stays on until it has.
    on("E1");
    typing.messageSent("alice", "signal:+15550002");
    typing.messageSent("alice", "signal:+15550009"); // another chat, no indicator of its own: not waited for
    typing.cycleEnded("alice");
    expect(stops()).toBe(0);
    typing.replyHandled("alice", "signal:+15550002");
    expect(stops()).toBe(1);

    // The reply was sent before its message-sent event came: the cycle's end stops the indicator at once.
    on("E2");
    typing.replyHandled("alice", "signal:+15550002");
    typing.messageSent("alice", "signal:+15550002");
    typing.cycleEnded("alice");
    expect(stops()).toBe(2);

    // A new input while the indicator waits for a reply: it stays on (no second start), for the new cycle.
    on("E3");
    typing.messageSent("alice", "signal:+15550002");
    typing.cycleEnded("alice");
    on("E4");
    typing.replyHandled("alice", "signal:+15550002");
    expect(stops()).toBe(2);
    typing.cycleEnded("alice");
    expect(stops()).toBe(3);
    expect(calls.filter((call) => call.method === "sendTyping" && call.params.stop === undefined)).toHaveLength(3);
    typing.stop();
  });

  it("stops after replyWaitMs when the reply is never handed over here (another replica sent it)", async () => {
    const { rpc, calls } = recordingRpc();
    const typing = new TypingIndicators({ rpc, logger: silentLogger, readReceipts: false, replyWaitMs: 30 });
    typing.track("E1", { agent: "alice", target: { groupId: "Zz==" }, sender: "+15550003", timestamp: 1 });
    typing.injected("alice", "E1");
    typing.messageSent("alice", "signal:group:Zz==");
    typing.cycleEnded("alice");
    expect(calls.some((call) => call.params.stop === true)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls.at(-1)).toEqual({ method: "sendTyping", params: { groupId: "Zz==", stop: true } });
    typing.stop();
  });
});
