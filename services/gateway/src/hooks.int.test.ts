import { createHmac } from "node:crypto";
import { decode, inboundEnvelopeSchema } from "@moniro/envelopes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestGateway, type TestGateway } from "./test/gateway-fixture.js";

const GITHUB_SECRET = "github-secret-0123456789abcdef";
const HMAC_SECRET = "generic-secret-0123456789abcdef";
const TOKEN = "deploy-token-0123456789abcdef";

const OPS = `name: ops
model: m
webhooks:
  gh:
    auth: github
    secret_env: GH_HOOK_SECRET
    priority: normal
    template: "{{ $event }}: {{ pull_request.title }} by {{ sender.login }} (#{{ number }}, labels {{ labels[0].name }})"
  signed:
    auth: hmac
    secret_env: GENERIC_HOOK_SECRET
    tolerance_s: 60
  deploy:
    auth: bearer
    token_env: DEPLOY_HOOK_TOKEN
    max_chars: 100
  public:
    auth: none
  broken:
    auth: github
    secret_env: NOT_SET_ANYWHERE
`;

const sha256 = (secret: string, ...parts: string[]) => {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return `sha256=${mac.digest("hex")}`;
};

describe("POST /v1/hooks/:name against a real gateway over real NATS and Redis", () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(
      { MONIRO_GATEWAY_HOOK_BODY_LIMIT: "2kb" },
      {
        agents: { ops: OPS },
        secrets: { GH_HOOK_SECRET: GITHUB_SECRET, GENERIC_HOOK_SECRET: HMAC_SECRET, DEPLOY_HOOK_TOKEN: TOKEN },
      },
    );
    await t.gateway.connected;
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  /** POST without the gateway's API key: a provider has none. */
  const hook = (name: string, body: string, headers: Record<string, string>) =>
    fetch(`${t.base}/v1/hooks/${name}`, { method: "POST", body, headers });

  const storedCount = async () => (await t.jsm.streams.info(t.subjects.streams.in)).state.messages;

  async function lastEnvelope() {
    const stored = await t.jsm.streams.getMessage(t.subjects.streams.in, { last_by_subj: t.subjects.in("ops") });
    const envelope = decode(inboundEnvelopeSchema, stored?.data ?? new Uint8Array());
    if (!envelope.ok) throw envelope.error;
    return envelope.value;
  }

  const pullRequest = JSON.stringify({
    action: "opened",
    number: 42,
    pull_request: { title: "Fix the flaky deploy" },
    sender: { login: "octocat" },
    labels: [{ name: "ci" }],
  });

  it("a GitHub delivery (signed JSON) is stored on moniro.in.ops as [webhook:gh] text in the personal thread, then answered 202", async () => {
    const before = await storedCount();
    const response = await hook("gh", pullRequest, {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": sha256(GITHUB_SECRET, pullRequest),
    });
    expect(response.status).toBe(202);
    const body = (await response.json()) as { id: string; delivery: string };
    expect(body.delivery).toBe("72d3162e-cc78-11e3-81ab-4c9367dc0958");
    expect(await storedCount()).toBe(before + 1);
    expect(await lastEnvelope()).toMatchObject({
      id: body.id,
      agent: "ops",
      source: "webhook:gh",
      replyTo: "webhook:gh",
      context: "personal",
      priority: "normal",
      text: "pull_request: Fix the flaky deploy by octocat (#42, labels ci)",
      meta: { webhook: "gh", delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", event: "pull_request" },
    });
  });

  it("a repeated delivery id is answered 202 with the same envelope id and stored once", async () => {
    const headers = {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": "repeat-me-1",
      "x-hub-signature-256": sha256(GITHUB_SECRET, pullRequest),
    };
    const first = await hook("gh", pullRequest, headers);
    expect(first.status).toBe(202);
    const before = await storedCount();
    const second = await hook("gh", pullRequest, headers);
    expect(second.status).toBe(202);
    expect(((await second.json()) as { id: string }).id).toBe(((await first.json()) as { id: string }).id);
    expect(await storedCount()).toBe(before);
  });

  it("accepts a GitHub form delivery (application/x-www-form-urlencoded with the JSON in 'payload'), signed over the form bytes", async () => {
    const form = new URLSearchParams({ payload: pullRequest }).toString();
    const response = await hook("gh", form, {
      "content-type": "application/x-www-form-urlencoded",
      "x-github-event": "pull_request",
      "x-github-delivery": "form-delivery-1",
      "x-hub-signature-256": sha256(GITHUB_SECRET, form),
    });
    expect(response.status).toBe(202);
    expect((await lastEnvelope()).text).toBe("pull_request: Fix the flaky deploy by octocat (#42, labels ci)");
  });

  it("refuses what it must, with JSON errors, and publishes none of it", async () => {
    const before = await storedCount();
    const json = { "content-type": "application/json" };
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<{ response: Response; status: number; code: string; message: RegExp }> = [
      {
        response: await hook("gh", pullRequest, {
          ...json,
          "x-hub-signature-256": sha256("wrong-secret", pullRequest),
        }),
        status: 401,
        code: "unauthorized",
        message: /webhook 'gh': signature does not match the body/,
      },
      {
        response: await hook("gh", pullRequest, {
          ...json,
          "x-hub-signature-256": sha256(GITHUB_SECRET, `${pullRequest} `),
        }),
        status: 401,
        code: "unauthorized",
        message: /signature does not match/,
      },
      {
        response: await hook("gh", pullRequest, json),
        status: 401,
        code: "unauthorized",
        message: /missing or malformed X-Hub-Signature-256/,
      },
      {
        response: await hook("nope", "{}", json),
        status: 404,
        code: "unknown_hook",
        message: /no webhook named 'nope'/,
      },
      {
        response: await hook("gh", JSON.stringify({ big: "x".repeat(3000) }), json),
        status: 413,
        code: "body_too_large",
        message: /larger than the limit of 2048 bytes \(MONIRO_GATEWAY_HOOK_BODY_LIMIT\)/,
      },
      {
        // Correctly signed, but ten minutes old: a replay outside the 60 s window.
        response: await hook("signed", '{"a":1}', {
          ...json,
          "x-webhook-timestamp": String(now - 600),
          "x-webhook-signature": sha256(HMAC_SECRET, `${now - 600}.`, '{"a":1}'),
        }),
        status: 401,
        code: "unauthorized",
        message: /outside the 60 s window/,
      },
      {
        response: await hook("signed", '{"a":1}', {
          ...json,
          "x-webhook-timestamp": String(now + 1),
          "x-webhook-signature": sha256(HMAC_SECRET, `${now}.`, '{"a":1}'),
        }),
        status: 401,
        code: "unauthorized",
        message: /does not match the timestamp and body/,
      },
      {
        response: await hook("deploy", "{}", { ...json, authorization: "Bearer not-the-token" }),
        status: 401,
        code: "unauthorized",
        message: /token not accepted/,
      },
      {
        // The gateway's own API key is not a hook token.
        response: await hook("deploy", "{}", { ...json, authorization: "Bearer key-one" }),
        status: 401,
        code: "unauthorized",
        message: /token not accepted/,
      },
      {
        response: await hook("public", "hello", { "content-type": "text/plain" }),
        status: 415,
        code: "unsupported_media_type",
        message: /'text\/plain' is not accepted for a webhook/,
      },
      {
        response: await hook("public", "{not json", json),
        status: 400,
        code: "bad_json",
        message: /webhook body is not valid JSON/,
      },
      {
        response: await hook("broken", "{}", json),
        status: 503,
        code: "hook_unavailable",
        message: /webhook 'broken' is defined but not usable/,
      },
      {
        response: await fetch(`${t.base}/v1/hooks/gh`),
        status: 405,
        code: "method_not_allowed",
        message: /use POST/,
      },
    ];
    for (const { response, status, code, message } of cases) {
      const error = await errorOf(response);
      expect({ status: error.status, code: error.code }).toEqual({ status, code });
      expect(error.message).toMatch(message);
    }
    expect(await storedCount()).toBe(before);
  });

  it("a generic HMAC delivery inside its window is accepted; a byte-identical replay without a delivery id is the same delivery", async () => {
    const body = JSON.stringify({ status: "success", commit: "abc1234" });
    const timestamp = String(Math.floor(Date.now() / 1000) - 30);
    const headers = {
      "content-type": "application/json",
      "x-webhook-timestamp": timestamp,
      "x-webhook-signature": sha256(HMAC_SECRET, `${timestamp}.`, body),
    };
    const first = await hook("signed", body, headers);
    expect(first.status).toBe(202);
    // Without a template the agent reads the payload as compact JSON.
    expect((await lastEnvelope()).text).toBe('{"status":"success","commit":"abc1234"}');
    const before = await storedCount();
    const replay = await hook("signed", body, headers);
    expect(replay.status).toBe(202);
    expect(((await replay.json()) as { id: string }).id).toBe(((await first.json()) as { id: string }).id);
    expect(await storedCount()).toBe(before);
  });

  it("a bearer hook takes its own token, needs no API key, and bounds the text to max_chars", async () => {
    const response = await hook("deploy", JSON.stringify({ log: "y".repeat(500) }), {
      "content-type": "application/json",
      authorization: `Bearer ${TOKEN}`,
      "idempotency-key": "deploy-7",
    });
    expect(response.status).toBe(202);
    const envelope = await lastEnvelope();
    expect(envelope.source).toBe("webhook:deploy");
    expect(envelope.priority).toBe("background");
    expect(envelope.text.length).toBeLessThanOrEqual(100);
    expect(envelope.text).toMatch(/^\{"log":"yyy.* … \[cut: \d+ more characters\]$/);
  });

  it("an 'auth: none' hook accepts anybody (the explicit opt-out)", async () => {
    const response = await hook("public", JSON.stringify({ ping: true }), {
      "content-type": "application/cloudevents+json",
    });
    expect(response.status).toBe(202);
    expect((await lastEnvelope()).text).toBe('{"ping":true}');
  });
});
