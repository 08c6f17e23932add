import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { newId } from "@moniro/envelopes";
import { type FakeSignalCli, startFakeSignalCli } from "@moniro/signal-bridge/test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type Model, toolUseReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import { NATS_URL, printServiceLogsOnFailure, type RunningService, type Stack } from "../support/stack.js";

// Issue 16, "What must be shown": the signal-bridge between the fake
// signal-cli daemon (PROTOCOLS.md A) and an agent served by the fake model.

const CLI = resolve(import.meta.dirname, "..", "..", "libs", "cli", "dist", "moniro.js");
const ALICE = "+15550002";
const STRANGER = "+15550003";
const INTRUDER = "+15550004";
const STALL_MS = 1_500;
const GROUP = "aGVsbG8gd29ybGQgZ3JvdXAgaWQgMzIgYnl0ZXM+/w==";

describe("Signal end to end (fake signal-cli, fake model)", () => {
  let model: Model;
  let stack: Stack;
  let fake: FakeSignalCli;
  let bridge: RunningService;
  let nc: NatsConnection;
  printServiceLogsOnFailure(() => stack);

  beforeAll(async () => {
    fake = await startFakeSignalCli({ keepaliveMs: 200 });
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner", "tool-executor"],
      agents: { sig: testAgentYaml("sig"), grp: testAgentYaml("grp") },
    }));
    const configFile = join(stack.dir, "signal.yaml");
    writeFileSync(
      configFile,
      `read_receipts: true\ngroups:\n  "${GROUP}":\n    agent: grp\n    require_mention: true\n`,
    );
    bridge = await stack.start("signal-bridge", {
      MONIRO_SIGNAL_URL: fake.url,
      MONIRO_SIGNAL_ACCOUNT: fake.account,
      MONIRO_SIGNAL_DEFAULT_AGENT: "sig",
      MONIRO_SIGNAL_CONFIG_FILE: configFile,
      MONIRO_SIGNAL_ALLOW: ALICE,
      MONIRO_SIGNAL_STALL_MS: String(STALL_MS),
      MONIRO_SIGNAL_SEND_ATTEMPTS: "3",
      MONIRO_SIGNAL_RETRY_BASE_MS: "100",
    });
    nc = await connect({ servers: NATS_URL });
  });

  afterAll(async () => {
    await stack?.stop();
    if (nc) {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(`KV_${stack.namespace}_signal_pairing`).catch(() => undefined);
      await nc.close();
    }
    await model?.close();
    await fake?.close();
  });

  /** Every user text the agent's model requests carried so far. */
  const seenByAgent = () => model.requests("sig").flatMap((request) => userTexts(request.body));
  const agentSaw = (needle: string) =>
    eventually(() => seenByAgent().some((text) => text.includes(needle)), `the agent to see '${needle}'`);

  it("a DM reaches the agent; its message reply reaches signal-cli's send, with typing shown in between", async () => {
    model.script("sig", toolUseReply({ name: "message", input: { text: "pong from sig" } }));
    const timestamp = fake.push({ from: ALICE, text: "ping" });
    const send = await fake.waitForCall(
      (call) => call.method === "send" && call.params.message === "pong from sig",
      "the agent's reply sent",
    );
    expect(send.params.recipient).toEqual([ALICE]);
    await agentSaw(`[signal:${ALICE}] ping`);

    const typingOn = fake.calls.findIndex(
      (call) => call.method === "sendTyping" && (call.params.recipient as string) === ALICE && !call.params.stop,
    );
    expect(typingOn).toBeGreaterThanOrEqual(0);
    expect(typingOn).toBeLessThan(fake.calls.indexOf(send));
    const typingOff = await fake.waitForCall(
      (call) => call.method === "sendTyping" && call.params.stop === true && call.params.recipient === ALICE,
      "typing stopped",
    );
    expect(fake.calls.indexOf(typingOff)).toBeGreaterThan(fake.calls.indexOf(send));
    // read_receipts: true in the config file: the message is marked read when the agent takes it.
    const receipt = fake.callsOf("sendReceipt").find((call) => call.params.targetTimestamp === timestamp);
    expect(receipt?.params).toEqual({ recipient: ALICE, targetTimestamp: timestamp, type: "read" });

    // The same Signal message seen again (signal-cli redelivers after a reconnect) does not reach the agent twice.
    fake.push({ from: ALICE, text: "ping", timestamp });
    model.script("sig", toolUseReply({ name: "message", input: { text: "marker reply" } }));
    fake.push({ from: ALICE, text: "after the duplicate" });
    await fake.waitForCall((call) => call.params.message === "marker reply", "the marker reply");
    const last = model.requests("sig").at(-1);
    const window = userTexts(last?.body ?? { model: "", messages: [] }).join("\n");
    expect(window).toContain("after the duplicate");
    expect(window.split(`[signal:${ALICE}] ping`).length - 1).toBe(1);
  });

  it("a configured group goes to its agent only when the account is @mentioned; the reply goes to the group", async () => {
    const seenByGrp = () => model.requests("grp").flatMap((request) => userTexts(request.body));
    fake.push({ from: ALICE, text: "chatter without a mention", groupId: GROUP });
    fake.push({ from: "+15550009", text: "a stranger in another group", groupId: "b3RoZXIgZ3JvdXA=" });
    model.script("grp", toolUseReply({ name: "message", input: { text: "answering the group" } }));
    fake.push({ from: ALICE, text: "@bot what is up", groupId: GROUP, mentions: [fake.account] });
    const send = await fake.waitForCall((call) => call.params.message === "answering the group", "the group reply");
    expect(send.params.groupId).toBe(GROUP);
    expect(send.params.recipient).toBeUndefined();
    const texts = seenByGrp().join("\n");
    expect(texts).toContain(`[signal:group:${GROUP}] ${ALICE}: @bot what is up`);
    expect(texts).not.toContain("chatter without a mention");
    expect(seenByAgent().join("\n")).not.toContain("a stranger in another group");
    expect(fake.calls.some((call) => call.method === "sendTyping" && call.params.groupId === GROUP)).toBe(true);
  });

  it("an unknown sender gets a code, reaches no agent until approved (moniro pairing), then does", async () => {
    fake.push({ from: STRANGER, text: "let me in" });
    const codeSent = await fake.waitForCall(
      (call) => call.method === "send" && (call.params.recipient as string[] | undefined)?.[0] === STRANGER,
      "a pairing code sent to the stranger",
    );
    const code = /code is ([0-9A-Z]{8})/.exec(String(codeSent.params.message))?.[1];
    expect(code).toBeDefined();

    const listed = await fetch(`${stack.gatewayUrl}/v1/pairing`);
    expect(listed.status).toBe(200);
    const pending = ((await listed.json()) as { pending: { code: string; sender: string }[] }).pending;
    expect(pending).toEqual([expect.objectContaining({ code, sender: STRANGER, status: "pending" })]);

    const cliList = await promisify(execFile)(process.execPath, [
      CLI,
      "pairing",
      "list",
      "--gateway",
      stack.gatewayUrl,
    ]);
    expect(cliList.stdout).toContain(`${code}  ${STRANGER}`);

    // A second message while pending: still nothing reaches the agent, and no second code.
    fake.push({ from: STRANGER, text: "still waiting" });
    model.script("sig", toolUseReply({ name: "message", input: { text: "alice marker" } }));
    fake.push({ from: ALICE, text: "alice while the stranger waits" });
    await fake.waitForCall((call) => call.params.message === "alice marker", "the alice marker reply");
    expect(seenByAgent().join("\n")).not.toContain(STRANGER);
    expect(
      fake.callsOf("send").filter((call) => (call.params.recipient as string[] | undefined)?.[0] === STRANGER),
    ).toHaveLength(1);

    const approved = await promisify(execFile)(process.execPath, [
      CLI,
      "pairing",
      "approve",
      String(code).toLowerCase(),
      "--gateway",
      stack.gatewayUrl,
    ]);
    expect(approved.stdout).toContain(`approved ${STRANGER}`);
    expect(((await (await fetch(`${stack.gatewayUrl}/v1/pairing`)).json()) as { pending: unknown[] }).pending).toEqual(
      [],
    );

    model.script("sig", toolUseReply({ name: "message", input: { text: "welcome" } }));
    fake.push({ from: STRANGER, text: "now approved" });
    await agentSaw(`[signal:${STRANGER}] now approved`);
    const welcome = await fake.waitForCall((call) => call.params.message === "welcome", "the welcome reply");
    expect(welcome.params.recipient).toEqual([STRANGER]);
    // What was said before approval never reaches the agent.
    expect(seenByAgent().join("\n")).not.toContain("let me in");
  });

  it("a denied sender stays out; unknown and malformed codes are refused", async () => {
    fake.push({ from: INTRUDER, text: "hi" });
    const codeSent = await fake.waitForCall(
      (call) => call.method === "send" && (call.params.recipient as string[] | undefined)?.[0] === INTRUDER,
      "a pairing code sent to the intruder",
    );
    const code = /code is ([0-9A-Z]{8})/.exec(String(codeSent.params.message))?.[1];
    const denied = await fetch(`${stack.gatewayUrl}/v1/pairing/${code}/deny`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(denied.status).toBe(200);
    const again = await fetch(`${stack.gatewayUrl}/v1/pairing/${code}/approve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(again.status).toBe(404);
    const malformed = await fetch(`${stack.gatewayUrl}/v1/pairing/nope/approve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(malformed.status).toBe(400);

    fake.push({ from: INTRUDER, text: "please" });
    model.script("sig", toolUseReply({ name: "message", input: { text: "deny marker" } }));
    fake.push({ from: ALICE, text: "alice after the deny" });
    await fake.waitForCall((call) => call.params.message === "deny marker", "the deny marker reply");
    expect(seenByAgent().join("\n")).not.toContain(INTRUDER);
  });

  it("a dropped event connection is replaced and the message sent meanwhile arrives", async () => {
    const connections = fake.connections;
    fake.dropConnections();
    const text = "sent while the stream was down";
    fake.push({ from: ALICE, text });
    await fake.waitForConnections(connections + 1);
    await agentSaw(`[signal:${ALICE}] ${text}`);
  });

  it("a stalled event connection (open, silent) is detected and replaced without losing a message", async () => {
    const connections = fake.connections;
    fake.stallConnections();
    const text = "sent while the stream was stalled";
    const stalledAt = Date.now();
    fake.push({ from: ALICE, text });
    await fake.waitForConnections(connections + 1, STALL_MS * 5);
    expect(Date.now() - stalledAt).toBeGreaterThanOrEqual(STALL_MS - 100);
    await agentSaw(`[signal:${ALICE}] ${text}`);
    const metrics = await (await fetch(`http://127.0.0.1:${bridge.port}/metrics`)).text();
    expect(metrics).toMatch(/moniro_signal_events_stalls_total [1-9]/);
    expect(metrics).toContain("moniro_signal_events_connected 1");
    expect((await fetch(`http://127.0.0.1:${bridge.port}/readyz`)).status).toBe(200);
  });

  it("a failed send is retried with backoff, then dead-lettered on <ns>.dlq.signal with the reason", async () => {
    const js = jetstream(nc);
    const outbound = (text: string) => ({
      v: 1,
      id: newId(),
      ts: new Date().toISOString(),
      agent: "sig",
      to: `signal:${ALICE}`,
      text,
      attachments: [],
    });
    const ioError = () => ({ error: { code: -3, message: "Failed to send message due to IO error" } });
    fake.script("send", ioError, ioError);
    await js.publish(`${stack.namespace}.out.signal`, JSON.stringify(outbound("retried until it went")));
    const tries = () => fake.callsOf("send").filter((call) => call.params.message === "retried until it went");
    await eventually(() => tries().length === 3, "two failed attempts, then a third that succeeds");

    const sub = nc.subscribe(`${stack.namespace}.dlq.signal`);
    fake.script("send", ioError, ioError, ioError);
    await js.publish(`${stack.namespace}.out.signal`, JSON.stringify(outbound("never delivered")));
    const record = await new Promise<{ reason: string; payload: string }>((done) => {
      void (async () => {
        for await (const msg of sub) {
          done(msg.json());
          break;
        }
      })();
    });
    expect(record.reason).toMatch(/IO error.*gave up after 3 attempts/);
    expect(record.payload).toContain("never delivered");
    expect(fake.callsOf("send").filter((call) => call.params.message === "never delivered")).toHaveLength(3);
    const attempts = fake.callsOf("send").filter((call) => call.params.message === "never delivered");
    // Backoff: the second wait (200 ms) is longer than the first (100 ms).
    const gaps = attempts.slice(1).map((call, i) => call.at - (attempts[i]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(190);
  });
});
