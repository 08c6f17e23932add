import { describe, expect, it } from "vitest";
import { redactUrlCredentials } from "./redact-url.js";

describe("redactUrlCredentials", () => {
  it("hides passwords and tokens in every server of the list and leaves the rest as it is", () => {
    expect(redactUrlCredentials("nats://user:pa%40ss@n1:4222, tls://tok3n@n2:4443,nats://n3:4222")).toBe(
      "nats://user:***@n1:4222,tls://***@n2:4443,nats://n3:4222",
    );
    expect(redactUrlCredentials("nats://127.0.0.1:4222")).toBe("nats://127.0.0.1:4222");
    expect(redactUrlCredentials("n1:4222")).toBe("n1:4222");
  });

  it("hides every password of a Redis seed list, with or without a user name", () => {
    expect(redactUrlCredentials("redis://u:secret@a:1,redis://:other@b:2")).toBe("redis://u:***@a:1,redis://:***@b:2");
  });

  it("hides a password written without a scheme or with an unescaped @", () => {
    expect(redactUrlCredentials("u:secret@a:6379")).toBe("u:***@a:6379");
    expect(redactUrlCredentials("redis://u:p@ss@a:6379/0")).toBe("redis://u:***@a:6379/0");
  });
});
