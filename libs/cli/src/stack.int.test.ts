import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnChild } from "./child-handle.js";
import { startStack } from "./stack.js";
import { STACK_SERVICES } from "./stack-plan.js";
import { tcpAnswers } from "./tcp-probe.js";

/** A stand-in for a built service: serves /readyz on MONIRO_HTTP_PORT, logs pino-style, exits on SIGTERM. */
const FAKE_SERVICE = `
const http = require("node:http");
const server = http.createServer((req, res) => res.writeHead(req.url === "/readyz" ? 200 : 404).end("ok"));
server.listen(Number(process.env.MONIRO_HTTP_PORT), "127.0.0.1", () => {
  console.log(JSON.stringify({ level: 30, msg: "ready on " + process.env.MONIRO_HTTP_PORT + " nats " + process.env.MONIRO_NATS_URL }));
});
process.on("SIGTERM", () => { console.log(JSON.stringify({ level: 30, msg: "bye" })); server.close(() => process.exit(0)); });
`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

describe("startStack with real child processes", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function fakeRepository(): string {
    const root = mkdtempSync(join(tmpdir(), "moniro-up-"));
    dirs.push(root);
    writeFileSync(join(root, "package.json"), "{}");
    for (const service of STACK_SERVICES) {
      mkdirSync(join(root, "services", service, "dist"), { recursive: true });
      // The fake repository has no "type": "module", so main.js is CommonJS.
      writeFileSync(join(root, "services", service, "dist", "main.js"), FAKE_SERVICE);
    }
    return root;
  }

  it("starts private NATS and Redis when they do not answer, then every service; prints prefixed logs; stops all", async () => {
    const root = fakeRepository();
    const [natsPort, redisPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
    const lines: string[] = [];
    const stack = await startStack({
      root,
      cwd: root,
      dataDir: join(root, ".moniro"),
      natsUrl: `nats://127.0.0.1:${natsPort}`,
      redisUrl: `redis://127.0.0.1:${redisPort}`,
      gatewayPort,
      basePort: 0,
      agentsDir: join(root, ".agents"),
      workspacesDir: join(root, ".moniro", "workspaces"),
      env: { PATH: process.env.PATH },
      spawn: spawnChild,
      terminal: { colour: false, line: (text) => lines.push(text) },
      printLogs: true,
      graceMs: 5_000,
    });
    try {
      expect(stack.startedServers).toEqual(["nats", "redis"]);
      expect(await tcpAnswers("127.0.0.1", natsPort)).toBe(true);
      expect(await tcpAnswers("127.0.0.1", redisPort)).toBe(true);
      expect(stack.services.map((s) => s.service).sort()).toEqual([...STACK_SERVICES].sort());
      const gateway = stack.services.find((s) => s.service === "gateway");
      expect(gateway?.port).toBe(gatewayPort);
      expect((await fetch(`${gateway?.url}/readyz`)).status).toBe(200);
      expect(lines.some((l) => /^\[gateway\] +INFO {2}ready on \d+ nats nats:\/\/127\.0\.0\.1:\d+$/.test(l))).toBe(
        true,
      );
    } finally {
      const reports = await stack.stop();
      expect(reports.map((r) => r.name)).toEqual([...STACK_SERVICES, "nats", "redis"]);
      expect(reports.every((r) => !r.killed)).toBe(true);
    }
    expect(await tcpAnswers("127.0.0.1", natsPort)).toBe(false);
    expect(await tcpAnswers("127.0.0.1", redisPort)).toBe(false);
    expect(await tcpAnswers("127.0.0.1", gatewayPort)).toBe(false);
    expect(readFileSync(stack.logFile("scheduler"), "utf8")).toContain('"msg":"bye"');
  });

  it("refuses a port that is taken, naming the service and the flags, and leaves nothing running", async () => {
    const root = fakeRepository();
    const blocker = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => blocker.once("listening", resolve));
    const address = blocker.address();
    const taken = typeof address === "object" && address ? address.port : 0;
    try {
      const attempt = startStack({
        root,
        cwd: root,
        dataDir: join(root, ".moniro"),
        natsUrl: process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222",
        redisUrl: process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
        gatewayPort: taken,
        basePort: 0,
        agentsDir: join(root, ".agents"),
        workspacesDir: join(root, ".moniro", "workspaces"),
        env: { PATH: process.env.PATH },
        spawn: spawnChild,
        terminal: { colour: false, line: () => {} },
        printLogs: false,
      });
      await expect(attempt).rejects.toThrow(`port ${taken} (gateway) is already in use`);
    } finally {
      blocker.close();
    }
  });
});
