import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { connectDelay, connectNats } from "./connect.js";
import { natsSettingsOf } from "./nats-settings.js";
import { drainNats } from "./shutdown.js";

const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 0;
}

function recordingLogger() {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  const at =
    (level: string) =>
    (fields: object, message = "") =>
      lines.push({ level, fields, message });
  return { lines, logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

describe("connectNats", () => {
  it("connects with ServiceConfig fields, and drainNats closes it (twice is fine)", async () => {
    const { lines, logger } = recordingLogger();
    const nc = await connectNats({ MONIRO_NATS_URL: NATS_URL }, { name: "bus-connect-test", logger });
    expect(lines).toContainEqual(expect.objectContaining({ level: "info", message: "NATS connected" }));
    await drainNats(nc);
    await drainNats(nc);
    expect(nc.isClosed()).toBe(true);
  });

  it("keeps retrying an unreachable server, saying which one, until aborted", async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const { lines, logger } = recordingLogger();
    const abort = new AbortController();
    const connecting = connectNats({ url }, { name: "bus-connect-test", logger, signal: abort.signal });
    while (!lines.some((line) => line.level === "warn")) await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort(new Error("stopped by the test"));
    await expect(connecting).rejects.toThrow("stopped by the test");
    expect(lines[0]).toMatchObject({ level: "warn", fields: { nats: url, attempt: 1 } });
    expect(lines[0]?.message).toContain(url);
  });

  it("backs off from 250 ms to at most 5 s, and maps config fields", () => {
    expect([1, 2, 3, 6, 20].map(connectDelay)).toEqual([250, 500, 1_000, 5_000, 5_000]);
    expect(
      natsSettingsOf({ MONIRO_NATS_URL: "nats://n:4222", MONIRO_NATS_USER: "u", MONIRO_NATS_PASSWORD: "p" }),
    ).toMatchObject({ url: "nats://n:4222", user: "u", password: "p", token: undefined, nkeySeedFile: undefined });
  });
});
