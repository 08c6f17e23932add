import { describe, expect, it } from "vitest";
import { checkSignalCli } from "./signal-cli-check.js";

describe("checkSignalCli", () => {
  it("is ok when GET /api/v1/check answers 200", async () => {
    const seen: string[] = [];
    const fakeFetch = (async (url: string) => {
      seen.push(url);
      return new Response(null, { status: 200 });
    }) as unknown as typeof fetch;
    expect(await checkSignalCli("http://signal:8080", fakeFetch)).toEqual({ ok: true });
    expect(seen).toEqual(["http://signal:8080/api/v1/check"]);
  });

  it("reports the status or the connection error, without throwing", async () => {
    const teapot = (async () => new Response(null, { status: 421 })) as unknown as typeof fetch;
    expect(await checkSignalCli("http://signal:8080", teapot)).toEqual({
      ok: false,
      reason: "signal-cli answered 421 at http://signal:8080/api/v1/check",
    });
    const refused = (async () => {
      throw new Error("ECONNREFUSED");
    }) as unknown as typeof fetch;
    expect(await checkSignalCli("http://signal:8080", refused)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("ECONNREFUSED"),
    });
  });
});
