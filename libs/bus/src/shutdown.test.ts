import { describe, expect, it } from "vitest";
import { onShutdown } from "./shutdown.js";

describe("onShutdown", () => {
  it("runs stop once on the first signal and exits 0, or 1 when stop fails", async () => {
    const exits: number[] = [];
    const stops: string[] = [];
    let finish: () => void = () => {};
    const exited = new Promise<void>((resolve) => {
      finish = resolve;
    });
    onShutdown(
      async (signal) => {
        stops.push(signal);
      },
      {
        exit: (code) => {
          exits.push(code);
          finish();
        },
      },
    );
    process.emit("SIGTERM");
    await exited;
    expect(stops).toEqual(["SIGTERM"]);
    expect(exits).toEqual([0]);

    let failed: () => void = () => {};
    const exitedAgain = new Promise<void>((resolve) => {
      failed = resolve;
    });
    onShutdown(
      async () => {
        throw new Error("redis would not quit");
      },
      {
        exit: (code) => {
          exits.push(code);
          failed();
        },
      },
    );
    process.emit("SIGINT");
    await exitedAgain;
    expect(exits).toEqual([0, 1]);
    process.emit("SIGTERM"); // consumes the last listener (already stopping: a no-op), restoring the default
    expect(exits).toEqual([0, 1]);
    expect(process.listenerCount("SIGTERM") + process.listenerCount("SIGINT")).toBe(0);
  });
});
