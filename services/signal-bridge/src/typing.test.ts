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
});
