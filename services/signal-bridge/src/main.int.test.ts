import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { deleteStreams, ensureStreams, outboundConsumerName } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeSignalCli, startFakeSignalCli } from "./test/fake-signal-cli.js";

const MAIN = resolve(import.meta.dirname, "..", "dist", "main.js");
const NATS_URL = process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222";

interface Started {
  child: ChildProcess;
  port: number;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function startBridge(env: Record<string, string>): Promise<Started> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run 'npx tsc --build' first`);
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      MONIRO_NATS_URL: NATS_URL,
      MONIRO_NAMESPACE: `t${randomBytes(5).toString("hex")}`,
      MONIRO_HTTP_PORT: String(port),
      MONIRO_LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  return { child, port, output, exited };
}

async function waitFor(url: string, started: Started, timeoutMs = 15_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`signal-bridge exited:\n${started.output.join("")}`);
    try {
      const response = await fetch(url);
      if (response.ok) return response;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ok in ${timeoutMs} ms:\n${started.output.join("")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("signal-bridge as a process", () => {
  const running: Started[] = [];
  afterEach(() => {
    for (const started of running.splice(0)) if (started.child.exitCode === null) started.child.kill("SIGKILL");
  });

  it("serves /healthz, /readyz and /metrics, says Signal is disabled without MONIRO_SIGNAL_URL, exits 0 on SIGTERM", async () => {
    const started = await startBridge({});
    running.push(started);
    const base = `http://127.0.0.1:${started.port}`;
    expect((await waitFor(`${base}/healthz`, started)).status).toBe(200);
    expect((await waitFor(`${base}/readyz`, started)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain("# TYPE");
    expect(started.output.join("")).toMatch(/Signal is disabled/);
    started.child.kill("SIGTERM");
    expect(await started.exited).toEqual({ code: 0, signal: null });
  });

  it("reports an unreachable signal-cli on /readyz while staying alive", async () => {
    const deadPort = await freePort();
    const subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    const started = await startBridge({
      MONIRO_NAMESPACE: subjects.namespace,
      MONIRO_SIGNAL_URL: `http://127.0.0.1:${deadPort}`,
      MONIRO_SIGNAL_DEFAULT_AGENT: "alice",
    });
    running.push(started);
    const base = `http://127.0.0.1:${started.port}`;
    await waitFor(`${base}/healthz`, started);
    try {
      let body = "";
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        const ready = await fetch(`${base}/readyz`);
        expect(ready.status).toBe(503);
        body = await ready.text();
        // "not connected: connecting" comes first, until the first attempt has failed.
        if (body.includes("signal-cli not reachable")) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(body).toContain(
        `signal-cli event stream not connected: signal-cli not reachable at http://127.0.0.1:${deadPort}/api/v1/events: connect ECONNREFUSED`,
      );
      started.child.kill("SIGTERM");
      expect((await started.exited).code).toBe(0);
    } finally {
      const nc = await connect({ servers: NATS_URL });
      const jsm = await jetstreamManager(nc);
      await deleteStreams(jsm, subjects);
      await jsm.streams.delete(`KV_${subjects.namespace}_signal_pairing`).catch(() => undefined);
      await nc.close();
    }
  });

  it("refuses to start without a default agent, naming the variable", async () => {
    const started = await startBridge({ MONIRO_SIGNAL_URL: "http://127.0.0.1:1" });
    running.push(started);
    expect((await started.exited).code).toBe(2);
    expect(started.output.join("")).toContain("MONIRO_SIGNAL_DEFAULT_AGENT: required while MONIRO_SIGNAL_URL is set");
  });

  it("refuses to start with a broken MONIRO_SIGNAL_CONFIG_FILE even while Signal is off, naming the file and field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "signal-config-"));
    try {
      const file = join(dir, "signal.yaml");
      writeFileSync(file, "numbers:\n  '0155': bob\n");
      const started = await startBridge({ MONIRO_SIGNAL_CONFIG_FILE: file });
      running.push(started);
      expect((await started.exited).code).toBe(2);
      const output = started.output.join("");
      expect(output).toContain(`invalid Signal configuration in ${file}:`);
      expect(output).toMatch(/numbers\.0155: the key must be a \+E.164 phone number/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails /readyz with the backlog when signal outbound waits on its consumer and nothing pulls it", async () => {
    const subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    const nc = await connect({ servers: NATS_URL });
    const jsm = await jetstreamManager(nc);
    try {
      await ensureStreams(jsm, subjects);
      const started = await startBridge({ MONIRO_NAMESPACE: subjects.namespace });
      running.push(started);
      const base = `http://127.0.0.1:${started.port}`;
      expect((await waitFor(`${base}/readyz`, started)).status).toBe(200);

      await jsm.consumers.add(subjects.streams.out, {
        durable_name: outboundConsumerName("signal"),
        filter_subject: subjects.out("signal"),
        ack_policy: AckPolicy.Explicit,
      });
      for (const text of ["one", "two"]) await jetstream(nc).publish(subjects.out("signal"), text);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { failures: Record<string, string> }).failures).toEqual({
        outbound: `2 outbound signal message(s) wait on ${subjects.streams.out} and no bridge pulls them`,
      });
      expect(await (await fetch(`${base}/metrics`)).text()).toContain('moniro_outbound_pending{channel="signal"} 2');
      started.child.kill("SIGTERM");
      expect((await started.exited).code).toBe(0);
    } finally {
      await deleteStreams(jsm, subjects);
      await nc.close();
    }
  });
});

describe("signal-bridge stopped (SIGTERM) while signal-cli is sending", () => {
  const ALICE = "+15550002";
  const running: Started[] = [];
  let fake: FakeSignalCli | undefined;
  let nc: NatsConnection | undefined;
  let subjects = createSubjects("unused");
  afterEach(async () => {
    for (const started of running.splice(0)) if (started.child.exitCode === null) started.child.kill("SIGKILL");
    await fake?.close();
    if (nc) {
      const jsm = await jetstreamManager(nc);
      await deleteStreams(jsm, subjects);
      await jsm.streams.delete(`KV_${subjects.namespace}_signal_pairing`).catch(() => undefined);
      await nc.close();
    }
    fake = undefined;
    nc = undefined;
  });

  /** A bridge on the fake signal-cli, relaying Alice's DMs to alice, in this test's namespace. */
  async function bridgeOnFake(graceMs: number): Promise<Started> {
    const started = await startBridge({
      MONIRO_NAMESPACE: subjects.namespace,
      MONIRO_SIGNAL_URL: fake?.url ?? "",
      MONIRO_SIGNAL_ACCOUNT: fake?.account ?? "",
      MONIRO_SIGNAL_DEFAULT_AGENT: "alice",
      MONIRO_SIGNAL_ALLOW: ALICE,
      MONIRO_SHUTDOWN_GRACE_MS: String(graceMs),
    });
    running.push(started);
    return started;
  }

  async function setUp(): Promise<FakeSignalCli> {
    subjects = createSubjects(`t${randomBytes(5).toString("hex")}`);
    nc = await connect({ servers: NATS_URL });
    fake = await startFakeSignalCli();
    return fake;
  }

  /** The texts on `<ns>.in.alice`, in order, as an agent would receive them. */
  async function inbound(): Promise<string[]> {
    if (!nc) return [];
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(subjects.streams.in).catch(() => undefined);
    const texts: string[] = [];
    if (!info || info.state.messages === 0) return texts;
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const stored = await jsm.streams.getMessage(subjects.streams.in, { seq }).catch(() => null);
      if (stored?.subject === subjects.in("alice")) texts.push((stored.json() as { text: string }).text);
    }
    return texts;
  }

  async function inboundEventually(expected: string[], timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await inbound()).length < expected.length && Date.now() < deadline) await sleep(50);
    expect(await inbound()).toEqual(expected);
  }

  /** The bridge's error-level log lines, parsed. */
  const errorsOf = (started: Started) =>
    started.output
      .join("")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 50);

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("relays a message whose second half arrives after SIGTERM, then closes, so a message sent later reaches the next bridge", async () => {
    const fake = await setUp();
    const first = await bridgeOnFake(5_000);
    await fake.waitForConnections(1);
    const cut = fake.frameOf({ from: ALICE, text: "two, cut in half" });
    const half = Math.floor(cut.length / 2);
    fake.writeRaw(fake.frameOf({ from: ALICE, text: "one" }) + cut.slice(0, half));
    await inboundEventually(["one"]);
    first.child.kill("SIGTERM");
    await sleep(300);
    fake.writeRaw(cut.slice(half));
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect({ inbound: await inbound(), errors: errorsOf(first) }).toEqual({
      inbound: ["one", "two, cut in half"],
      errors: [],
    });
    expect(fake.healthyConnections).toBe(0);

    // signal-cli keeps what it has not sent (--receive-mode on-connection) for the next bridge.
    fake.push({ from: ALICE, text: "three, sent while no bridge runs" });
    const second = await bridgeOnFake(5_000);
    await inboundEventually(["one", "two, cut in half", "three, sent while no bridge runs"]);
    // Nothing cut off in hand: a SIGTERM closes at once, without waiting out the grace.
    const stopping = Date.now();
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopping).toBeLessThan(3_000);
    expect(errorsOf(second)).toEqual([]);
  });

  it("relays the events read while the first was in hand at SIGTERM, each once", async () => {
    const fake = await setUp();
    const started = await bridgeOnFake(5_000);
    await fake.waitForConnections(1);
    // An unknown sender's message is in hand while signal-cli takes its time to send the pairing code.
    let answerPairing: () => void = () => {};
    fake.script(
      "send",
      () => new Promise((resolve) => (answerPairing = () => resolve({ result: { timestamp: 1, results: [] } }))),
    );
    fake.writeRaw(fake.frameOf({ from: "+15550003", text: "let me in" }) + fake.frameOf({ from: ALICE, text: "one" }));
    await fake.waitForCall((call) => call.method === "send", "the pairing code");
    fake.writeRaw(fake.frameOf({ from: ALICE, text: "two" }));
    fake.writeRaw(fake.frameOf({ from: ALICE, text: "three" }));
    await sleep(300);
    started.child.kill("SIGTERM");
    await sleep(300);
    answerPairing();
    expect(await started.exited).toEqual({ code: 0, signal: null });
    expect({ inbound: await inbound(), errors: errorsOf(started) }).toEqual({
      inbound: ["one", "two", "three"],
      errors: [],
    });
  });

  it("logs at error level, with what came, an event cut off at SIGTERM whose rest does not come within the grace", async () => {
    const fake = await setUp();
    const started = await bridgeOnFake(1_000);
    await fake.waitForConnections(1);
    const cut = fake.frameOf({ from: ALICE, text: "two, never finished" });
    const half = cut.indexOf("never") + 3;
    fake.writeRaw(fake.frameOf({ from: ALICE, text: "one" }) + cut.slice(0, half));
    await inboundEventually(["one"]);
    const stopping = Date.now();
    started.child.kill("SIGTERM");
    expect(await started.exited).toEqual({ code: 0, signal: null });
    expect({ inbound: await inbound(), errors: errorsOf(started) }).toEqual({
      inbound: ["one"],
      errors: [
        expect.objectContaining({
          event: cut.slice("event:receive\ndata:".length, half),
          err: expect.stringMatching(/cut off/),
        }),
      ],
    });
    // The bridge waited out the grace for the rest, then closed.
    expect(Date.now() - stopping).toBeGreaterThanOrEqual(900);
    expect(fake.healthyConnections).toBe(0);
  });
});
