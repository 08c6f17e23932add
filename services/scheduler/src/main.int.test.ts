import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { resolve } from "node:path";
import { deleteStreams } from "@moniro/bus";
import { createSubjects } from "@moniro/envelopes";
import { deleteRegistryBuckets } from "@moniro/registry";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { deletePrefix, NATS_URL, REDIS_URL, randomToken } from "./test/redis-fixture.js";

const MAIN = resolve(import.meta.dirname, "..", "dist", "main.js");

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

describe("scheduler as a process", () => {
  const children: ChildProcess[] = [];
  const namespaces: string[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null) continue;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGKILL");
      await exited;
    }
    const redis = new Redis(REDIS_URL);
    const nc = await connect({ servers: NATS_URL });
    const jsm = await jetstreamManager(nc);
    for (const namespace of namespaces.splice(0)) {
      await deletePrefix(redis, `${namespace}:`);
      // The scheduler provisions its namespace's inbound and DLQ streams and opens its agent registry
      // (two KV buckets); they all go with the test.
      await deleteStreams(nc, createSubjects(namespace));
      await deleteRegistryBuckets(jsm, namespace);
    }
    await nc.close();
    redis.disconnect();
  });

  it("becomes ready once NATS and Redis answer, serves metrics, and exits 0 on SIGTERM", async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run 'npx tsc --build' first`);
    const namespace = randomToken();
    namespaces.push(namespace);
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        MONIRO_NATS_URL: NATS_URL,
        MONIRO_REDIS_URL: REDIS_URL,
        MONIRO_NAMESPACE: namespace,
        MONIRO_REDIS_PREFIX: `${namespace}:`,
        MONIRO_HTTP_PORT: String(port),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    const output: string[] = [];
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));

    const deadline = Date.now() + 15_000;
    let ready = false;
    while (!ready) {
      if (child.exitCode !== null) throw new Error(`scheduler exited:\n${output.join("")}`);
      if (Date.now() > deadline) throw new Error(`scheduler not ready:\n${output.join("")}`);
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 50));
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain("moniro_scheduler_requests_total");
    expect(output.join("")).toContain('"msg":"scheduler answering requests"');
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
