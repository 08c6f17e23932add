import { describe, expect, it } from "vitest";
import { Supervisor } from "./supervisor.js";
import { FakeChild } from "./test/fake-child.js";

describe("Supervisor", () => {
  it("stops services with SIGTERM before the servers they use", async () => {
    const log: string[] = [];
    const supervisor = new Supervisor(1_000);
    supervisor.add({ name: "nats", handle: new FakeChild(undefined, log, "nats"), tier: "server" });
    supervisor.add({ name: "gateway", handle: new FakeChild(undefined, log, "gateway"), tier: "service" });
    supervisor.add({ name: "scheduler", handle: new FakeChild(undefined, log, "scheduler"), tier: "service" });
    const reports = await supervisor.stopAll();
    expect(log).toEqual(["gateway:SIGTERM", "scheduler:SIGTERM", "nats:SIGTERM"]);
    expect(reports.map((r) => [r.name, r.killed])).toEqual([
      ["gateway", false],
      ["scheduler", false],
      ["nats", false],
    ]);
  });

  it("SIGKILLs a child that ignores SIGTERM after the grace period", async () => {
    const stuck = new FakeChild(["SIGKILL"]);
    const supervisor = new Supervisor(20);
    supervisor.add({ name: "agent-runner", handle: stuck, tier: "service" });
    const [report] = await supervisor.stopAll();
    expect(stuck.signals).toEqual(["SIGTERM", "SIGKILL"]);
    expect(report).toMatchObject({ name: "agent-runner", killed: true, status: { signal: "SIGKILL" } });
  });

  it("leaves children that already exited alone, and stops only once", async () => {
    const gone = new FakeChild();
    gone.exit({ code: 1, signal: null });
    const alive = new FakeChild();
    const supervisor = new Supervisor(1_000);
    supervisor.add({ name: "gone", handle: gone, tier: "service" });
    supervisor.add({ name: "alive", handle: alive, tier: "service" });
    const [first, second] = await Promise.all([supervisor.stopAll(), supervisor.stopAll()]);
    expect(first).toBe(second);
    expect(gone.signals).toEqual([]);
    expect(alive.signals).toEqual(["SIGTERM"]);
    expect(first?.[0]?.status.code).toBe(1);
  });
});
