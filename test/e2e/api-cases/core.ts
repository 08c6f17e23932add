import { expect } from "vitest";
import { openSse } from "../../support/sse.js";
import { type ApiCase, type CaseContext, type CaseTable, unreachableGateway } from "./case.js";

const codeOf = (body: unknown) => (body as { error: { code: string } }).error.code;
const messageOf = (body: unknown) => (body as { error: { message: string } }).error.message;

/** The status of `ada` as the gateway shows it. */
const agentState = async (context: CaseContext) =>
  ((await (await context.call("GET", "/v1/agents/ada")).json()) as { state: string }).state;

/** ada's thread once it holds `needle` (the fake model answers every input with "ok"). */
async function threadHolding(context: CaseContext, needle: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const thread = await (await context.call("GET", "/v1/agents/ada/thread?order=newest")).text();
    if (thread.includes(needle) && (await agentState(context)) === "idle") return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`'${needle}' never reached ada's thread`);
}

/** The pairing code the signal-bridge sent to `sender` (a stranger: every sender is one here). */
async function pairingCode(context: CaseContext, sender: string): Promise<string> {
  context.signal.push({ from: sender, text: "may I?" });
  const sent = await context.signal.waitForCall(
    (call) => call.method === "send" && (call.params.recipient as string[] | undefined)?.[0] === sender,
    `a pairing code sent to ${sender}`,
  );
  const code = /code is ([0-9A-Z]{8})/.exec(String(sent.params.message))?.[1];
  if (!code) throw new Error(`no code in ${String(sent.params.message)}`);
  return code;
}

const control = (op: "cancel" | "pause" | "resume"): readonly ApiCase[] => [
  {
    what: `${op} an unknown agent`,
    status: 404,
    send: (context) => context.call("POST", `/v1/agents/zed/${op}`, {}),
    check: (body) =>
      expect(body).toMatchObject({ error: { code: "unknown_agent", details: { known: ["ada", "bob"] } } }),
  },
  {
    what: "a reason that is no string",
    status: 400,
    send: (context) => context.call("POST", `/v1/agents/bob/${op}`, { reason: 5 }),
    check: (body) => expect(messageOf(body)).toBe("reason: must be a string of at most 1000 characters"),
  },
  { what: "no key", status: 401, send: (context) => context.anonymous("POST", `/v1/agents/bob/${op}`) },
];

const SSE_TYPE = "text/event-stream";

/** The core routes (libs/api/src/core.ts) against the conformance stack. */
export const coreCases: CaseTable = {
  sendMessage: [
    {
      what: "a message is stored and reaches ada's thread",
      status: 202,
      send: (context) => context.call("POST", "/v1/agents/ada/messages", { text: "hello ada", from: "carol" }),
      async check(body, context) {
        expect((body as { id: string }).id).toMatch(/^[0-9A-Za-z_-]+$/);
        await threadHolding(context, "hello ada");
      },
    },
    {
      what: "an empty text, named",
      status: 400,
      send: (context) => context.call("POST", "/v1/agents/ada/messages", { text: "", from: "carol" }),
      check: (body) => expect(codeOf(body)).toBe("invalid_body"),
    },
    {
      what: "not JSON",
      status: 415,
      send: (context) => context.call("POST", "/v1/agents/ada/messages", undefined, { "content-type": "text/plain" }),
      check: (body) => expect(codeOf(body)).toBe("unsupported_media_type"),
    },
    {
      what: "an unknown agent",
      status: 404,
      send: (context) => context.call("POST", "/v1/agents/zed/messages", { text: "hi", from: "carol" }),
      check: (body) => expect(codeOf(body)).toBe("unknown_agent"),
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("POST", "/v1/agents/ada/messages") },
  ],
  streamEvents: [
    {
      what: "an SSE stream; a message to ada shows as her events, each a JSON envelope",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/ada/events", undefined, { accept: SSE_TYPE }),
      async check(_body, context) {
        const stream = await openSse(`${context.stack.gatewayUrl}/v1/agents/ada/events`, {
          authorization: "Bearer conformance-key",
        });
        try {
          await context.call("POST", "/v1/agents/ada/messages", { text: "watched over SSE", from: "carol" });
          const first = await stream.waitFor(() => true);
          expect(first.event).toMatch(/^[a-z_.-]+$/);
          expect(JSON.parse(first.data)).toMatchObject({ agent: "ada" });
          await threadHolding(context, "watched over SSE");
        } finally {
          await stream.close();
        }
      },
    },
    {
      what: "a Last-Event-ID that is no id",
      status: 400,
      send: (context) => context.call("GET", "/v1/agents/ada/events", undefined, { "last-event-id": "abc" }),
      check: (body) => expect(codeOf(body)).toBe("invalid_query"),
    },
    {
      what: "an unknown agent",
      status: 404,
      send: (context) => context.call("GET", "/v1/agents/zed/events"),
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/agents/ada/events") },
  ],
  getAgentStatus: [
    {
      what: "ada, idle after its reply",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/ada"),
      check: (body) =>
        expect(body).toMatchObject({ agent: "ada", state: "idle", inbox: { immediate: 0, normal: 0, background: 0 } }),
    },
    { what: "an unknown agent", status: 404, send: (context) => context.call("GET", "/v1/agents/zed") },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/agents/ada") },
  ],
  getThread: [
    {
      what: "the newest page holds carol's message and ada's answer",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/ada/thread?order=newest&limit=10"),
      check(body) {
        const page = body as { agent: string; context: string; entries: Array<{ kind: string }> };
        expect(page).toMatchObject({ agent: "ada", context: "personal", order: "newest" });
        expect(page.entries.map((entry) => entry.kind)).toEqual(expect.arrayContaining(["input", "assistant"]));
      },
    },
    {
      what: "a limit out of range",
      status: 400,
      send: (context) => context.call("GET", "/v1/agents/ada/thread?limit=0"),
      check: (body) => expect(codeOf(body)).toBe("invalid_query"),
    },
    { what: "an unknown agent", status: 404, send: (context) => context.call("GET", "/v1/agents/zed/thread") },
  ],
  pauseAgent: [
    {
      what: "bob is paused",
      status: 200,
      send: (context) => context.call("POST", "/v1/agents/bob/pause", { reason: "conformance" }),
      check: (body) => expect(body).toMatchObject({ ok: true, agent: "bob", op: "pause", state: "paused" }),
    },
    ...control("pause"),
  ],
  resumeAgent: [
    {
      what: "bob is resumed",
      status: 200,
      send: (context) => context.call("POST", "/v1/agents/bob/resume"),
      check: (body) => expect(body).toMatchObject({ ok: true, agent: "bob", op: "resume" }),
    },
    {
      what: "resuming bob again, who is not paused: never refused, ok with the state he is in (docs/api.md)",
      status: 200,
      send: (context) => context.call("POST", "/v1/agents/bob/resume"),
      check: (body) =>
        expect(body).toMatchObject({
          ok: true,
          agent: "bob",
          op: "resume",
          // idle, or running while the loop the pause started is still winding down
          state: expect.stringMatching(/^(idle|running)$/),
        }),
    },
    ...control("resume"),
  ],
  cancelAgent: [
    {
      what: "bob, idle: nothing to cancel, refused by the runner in a 200 (ok false, with why)",
      status: 200,
      send: (context) => context.call("POST", "/v1/agents/bob/cancel"),
      check: (body) => expect(body).toMatchObject({ ok: false, agent: "bob", op: "cancel", error: expect.any(String) }),
    },
    ...control("cancel"),
  ],
  listChildren: [
    {
      what: "ada has no sub-agents",
      status: 200,
      send: (context) => context.call("GET", "/v1/agents/ada/children"),
      check: (body) =>
        expect(body).toEqual({
          agent: "ada",
          children: [],
          usage: { children: 0, inputTokens: 0, outputTokens: 0 },
        }),
    },
    { what: "an unknown agent", status: 404, send: (context) => context.call("GET", "/v1/agents/zed/children") },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/agents/ada/children") },
  ],
  health: [{ what: "alive, without a key", status: 200, send: (context) => context.anonymous("GET", "/healthz") }],
  readiness: [
    {
      what: "NATS, Redis and the registry answer",
      status: 200,
      send: (context) => context.anonymous("GET", "/readyz"),
      check: (body) =>
        expect(body).toEqual({
          ok: true,
          ready: true,
          checks: { nats: "ok", redis: "ok", registry: "ok" },
          failures: {},
        }),
    },
    {
      what: "a gateway whose NATS and Redis do not answer names each failing check",
      status: 503,
      send: async (context) => fetch(`${await unreachableGateway(context)}/readyz`),
      check(body) {
        const readiness = body as { ok: boolean; ready: boolean; failures: Record<string, string> };
        expect(readiness).toMatchObject({ ok: false, ready: false });
        expect(Object.keys(readiness.failures).sort()).toEqual(["nats", "redis", "registry"]);
      },
    },
  ],
  metrics: [
    {
      what: "Prometheus text, without a key",
      status: 200,
      send: (context) => context.anonymous("GET", "/metrics"),
      check: (body) => expect(String(body)).toContain("# TYPE"),
    },
  ],
  listPairing: [
    {
      what: "a stranger who wrote on Signal waits with a code",
      status: 200,
      async send(context) {
        context.memo.set("approveCode", await pairingCode(context, "+15550101"));
        context.memo.set("denyCode", await pairingCode(context, "+15550102"));
        return context.call("GET", "/v1/pairing");
      },
      check(body, context) {
        const pending = (body as { pending: Array<{ code: string; sender: string; status: string }> }).pending;
        expect(pending.map((entry) => `${entry.code} ${entry.sender} ${entry.status}`).sort()).toEqual(
          [
            `${context.memo.get("approveCode")} +15550101 pending`,
            `${context.memo.get("denyCode")} +15550102 pending`,
          ].sort(),
        );
      },
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("GET", "/v1/pairing") },
  ],
  approvePairing: [
    {
      what: "the stranger's code",
      status: 200,
      send: (context) => context.call("POST", `/v1/pairing/${context.memo.get("approveCode")}/approve`),
      check: (body) => expect(body).toMatchObject({ entry: { sender: "+15550101", status: "approved" } }),
    },
    {
      what: "the same code again: no longer pending",
      status: 404,
      send: (context) => context.call("POST", `/v1/pairing/${context.memo.get("approveCode")}/approve`),
      check: (body) => expect(codeOf(body)).toBe("not_found"),
    },
    {
      what: "no pairing code",
      status: 400,
      send: (context) => context.call("POST", "/v1/pairing/nope/approve"),
      check: (body) => expect(codeOf(body)).toBe("bad_request"),
    },
  ],
  denyPairing: [
    {
      what: "the other stranger's code",
      status: 200,
      send: (context) => context.call("POST", `/v1/pairing/${context.memo.get("denyCode")}/deny`),
      check: (body) => expect(body).toMatchObject({ entry: { sender: "+15550102", status: "denied" } }),
    },
    {
      what: "an unknown code",
      status: 404,
      send: (context) => context.call("POST", "/v1/pairing/ZZZZZZZZ/deny"),
    },
    { what: "no key", status: 401, send: (context) => context.anonymous("POST", "/v1/pairing/ZZZZZZZZ/deny") },
  ],
};
