import { afterEach, describe, expect, it } from "vitest";
import { sendParams, sendTargetOf } from "./outbound.js";
import { SignalRpcError, signalRpc } from "./signal-rpc.js";
import { type FakeSignalCli, startFakeSignalCli } from "./test/fake-signal-cli.js";

describe("the JSON-RPC client against the fake daemon", () => {
  let fake: FakeSignalCli;
  afterEach(() => fake?.close());

  it("sends a request with the account and returns its result", async () => {
    fake = await startFakeSignalCli();
    const rpc = signalRpc({ baseUrl: fake.url, account: fake.account });
    const result = (await rpc.call("send", { recipient: ["+15550002"], message: "hi" })) as { results: unknown[] };
    expect(result.results).toEqual([expect.objectContaining({ type: "SUCCESS" })]);
    expect(fake.calls).toEqual([
      expect.objectContaining({ method: "send", params: { recipient: ["+15550002"], message: "hi" } }),
    ]);
  });

  it("classifies failures: user errors are permanent; I/O, rate limits and an unreachable daemon are retryable", async () => {
    fake = await startFakeSignalCli();
    const rpc = signalRpc({ baseUrl: fake.url });
    fake.script("send", () => ({ error: { code: -1, message: "Unregistered user" } }));
    fake.script("send", () => ({ error: { code: -5, message: "Rate limit" } }));
    await expect(rpc.call("send", { recipient: ["+1555000"], message: "x" })).rejects.toMatchObject({
      retryable: false,
      code: -1,
    });
    await expect(rpc.call("send", { recipient: ["+1555000"], message: "x" })).rejects.toMatchObject({
      retryable: true,
      code: -5,
    });
    await expect(rpc.call("nosuch", {})).rejects.toMatchObject({ retryable: false, code: -32601 });
    const wrongAccount = signalRpc({ baseUrl: fake.url, account: "+15559999" });
    await expect(wrongAccount.call("send", { message: "x" })).rejects.toThrow(/Specified account does not exist/);
    const down = signalRpc({ baseUrl: "http://127.0.0.1:1" });
    const error = await down.call("send", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignalRpcError);
    expect(error).toMatchObject({ retryable: true });
  });

  it("the fake speaks the HTTP rules: 415 without JSON, 405, 201 for a notification, 421 for a foreign Host", async () => {
    fake = await startFakeSignalCli();
    const rpcUrl = `${fake.url}/api/v1/rpc`;
    expect(
      (await fetch(rpcUrl, { method: "POST", body: "{}", headers: { "content-type": "text/plain" } })).status,
    ).toBe(415);
    expect((await fetch(rpcUrl)).status).toBe(405);
    const notification = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "sendTyping", params: { recipient: "+15550002" } }),
    });
    expect(notification.status).toBe(201);
    expect(await notification.text()).toBe("");
    const { request } = await import("node:http");
    const status = await new Promise<number>((done) => {
      const req = request(
        rpcUrl,
        { method: "POST", headers: { host: "signal-cli:8080", "content-type": "application/json" } },
        (res) => done(res.statusCode ?? 0),
      );
      req.end("{}");
    });
    expect(status).toBe(421);
  });
});

describe("outbound addresses", () => {
  it("maps signal:+number, signal:<uuid> and signal:group:<id>; refuses the rest with the fix", () => {
    expect(sendTargetOf("signal:+15550002")).toEqual({ recipient: ["+15550002"] });
    expect(sendTargetOf("signal:group:abcd+/==")).toEqual({ groupId: "abcd+/==" });
    expect(sendTargetOf("signal:00000000-0000-4000-8000-000000000002")).toEqual({
      recipient: ["00000000-0000-4000-8000-000000000002"],
    });
    expect(sendTargetOf("signal:alice")).toMatch(/E.164/);
  });

  it("sends inline attachments as data URIs and linked ones as links under the text", () => {
    const params = sendParams({
      v: 1,
      id: "01J00000000000000000000000",
      ts: new Date(0).toISOString(),
      agent: "alice",
      to: "signal:+15550002",
      text: "the report",
      attachments: [
        { name: "a b.png", contentType: "image/png; charset=binary", data: "AAAA" },
        { name: "big.pdf", contentType: "application/pdf", url: "https://example.com/big.pdf" },
      ],
    });
    expect(params).toEqual({
      message: "the report\nhttps://example.com/big.pdf",
      attachments: ["data:image/png;filename=a%20b.png;base64,AAAA"],
    });
  });
});
