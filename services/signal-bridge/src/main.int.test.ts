import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { deleteStreams, ensureStreams, outboundConsumerName } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";

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
