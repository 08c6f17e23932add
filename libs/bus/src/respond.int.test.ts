import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { respondJson } from "./respond.js";
import { subscribeEnvelopes } from "./subscribe.js";

// The repository's private-server helpers (test/support), loaded by path: it is not a workspace package.
interface PrivateServer {
  url: string;
  start(): Promise<void>;
  destroy(): Promise<void>;
}
const supportDir = fileURLToPath(new URL("../../../test/support/", import.meta.url));

/** A logger that keeps what it was told. */
function recording() {
  const lines: Array<{ level: string; fields: object; message: string | undefined }> = [];
  const at = (level: string) => (fields: object, message?: string) => lines.push({ level, fields, message });
  return { lines, logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

const decoder = new TextDecoder();
const json = (data: Uint8Array) => JSON.parse(decoder.decode(data)) as Record<string, unknown>;

describe("respondJson against a NATS server whose max_payload is 4 KiB", () => {
  let server: PrivateServer;
  let nc: NatsConnection;
  beforeAll(async () => {
    const { privateNatsWithConfig } = await import(join(supportDir, "private-servers.ts"));
    const { freePort } = await import(join(supportDir, "ports.ts"));
    server = privateNatsWithConfig(await freePort(), () => "max_payload: 4096");
    await server.start();
    nc = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await nc?.close();
    await server?.destroy();
  });

  it("answers a reply too large for the server with the fallback, logged, instead of throwing", async () => {
    const { lines, logger } = recording();
    const sent: boolean[] = [];
    const subscription = nc.subscribe("big.reply", {
      callback: (_error, msg) => {
        sent.push(
          respondJson(
            msg,
            { ok: true, items: "x".repeat(10_000) },
            {
              logger,
              fallback: (tooLarge) => ({ ok: false, error: tooLarge.message }),
            },
          ),
        );
      },
    });
    const reply = json((await nc.request("big.reply", "", { timeout: 2_000 })).data);
    expect(reply).toEqual({
      ok: false,
      error: expect.stringMatching(/^the reply is 100\d\d bytes, more than the NATS server takes in one message/),
    });
    expect(sent).toEqual([true]);
    expect(lines).toEqual([
      expect.objectContaining({ level: "error", message: "reply too large for NATS; sent an error instead" }),
    ]);
    subscription.unsubscribe();
  });

  it("gives a subscribeEnvelopes requester the handler's error reply when its answer is too large", async () => {
    const subscription = subscribeEnvelopes({
      nc,
      subject: "big.envelope",
      schema: z.object({ n: z.number() }),
      origin: "test",
      handler: async ({ n }) => ({ ok: true, items: "y".repeat(n) }),
      errorReply: (error) => ({ ok: false, code: "failed", error: (error as Error).message }),
    });
    await nc.flush();
    const small = json((await nc.request("big.envelope", JSON.stringify({ n: 10 }), { timeout: 2_000 })).data);
    expect(small).toEqual({ ok: true, items: "yyyyyyyyyy" });
    const big = json((await nc.request("big.envelope", JSON.stringify({ n: 10_000 }), { timeout: 2_000 })).data);
    expect(big).toMatchObject({ ok: false, code: "failed", error: expect.stringContaining("max_payload") });
    subscription.unsubscribe();
  });
});
