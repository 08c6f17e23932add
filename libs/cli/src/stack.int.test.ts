import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSubjects } from "@moniro/envelopes";
import { afterEach, describe, expect, it } from "vitest";
import { type Spawner, spawnChild } from "./child-handle.js";
import { CREDENTIALS_FILE, StackConfigError } from "./server-auth.js";
import { type StartStackOptions, startStack } from "./stack.js";
import { STACK_SERVICES } from "./stack-plan.js";
import { tcpAnswers } from "./tcp-probe.js";
import { natsAnswer, redisAnswer } from "./test/wire-probe.js";

/**
 * A stand-in for a built service: logs in to NATS and Redis with the
 * credentials in its environment (as the real services do), then serves
 * /readyz on MONIRO_HTTP_PORT; logs pino-style, exits on SIGTERM. A login that
 * fails makes it exit, so a ready stack proves every service got working credentials.
 */
const FAKE_SERVICE = `
const http = require("node:http");
const net = require("node:net");
function ask(url, request, answer) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const socket = net.connect(Number(u.port), u.hostname);
    let got = "";
    let sent = false;
    socket.on("data", (d) => {
      got += d;
      if (!sent && u.protocol === "nats:") { sent = true; socket.write(request); }
      if (answer.test(got)) { socket.destroy(); resolve(); }
      else if (/-ERR|-NOAUTH|-WRONGPASS/.test(got)) { socket.destroy(); reject(new Error(u.protocol + " " + got.trim())); }
    });
    socket.on("connect", () => { if (u.protocol === "redis:") socket.write(request); });
    socket.on("error", reject);
  });
}
const bulk = (...p) => "*" + p.length + "\\r\\n" + p.map((x) => "$" + Buffer.byteLength(x) + "\\r\\n" + x + "\\r\\n").join("");
const env = process.env;
const nats = ask(env.MONIRO_NATS_URL, "CONNECT " + JSON.stringify({ verbose: false, user: env.MONIRO_NATS_USER, pass: env.MONIRO_NATS_PASSWORD }) + "\\r\\nPING\\r\\n", /PONG/);
const redis = env.MONIRO_REDIS_URL
  ? ask(env.MONIRO_REDIS_URL, (env.MONIRO_REDIS_PASSWORD ? bulk("AUTH", env.MONIRO_REDIS_USERNAME, env.MONIRO_REDIS_PASSWORD) : "") + bulk("PING"), /\\+PONG/)
  : Promise.resolve();
Promise.all([nats, redis]).then(() => {
  const server = http.createServer((req, res) => res.writeHead(req.url === "/readyz" ? 200 : 404).end("ok"));
  server.listen(Number(env.MONIRO_HTTP_PORT), "127.0.0.1", () => {
    if (env.MONIRO_REDIS_URL) console.log(JSON.stringify({ level: 30, msg: "redis as " + env.MONIRO_REDIS_USERNAME }));
    console.log(JSON.stringify({ level: 30, msg: "ready on " + env.MONIRO_HTTP_PORT + " nats " + env.MONIRO_NATS_URL + " as " + env.MONIRO_NATS_USER }));
  });
  process.on("SIGTERM", () => { console.log(JSON.stringify({ level: 30, msg: "bye" })); server.close(() => process.exit(0)); });
}, (error) => { console.log(JSON.stringify({ level: 50, msg: "login failed: " + error.message })); process.exit(1); });
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

  /**
   * `moniro up`'s options for the repository `root` (data in `root/.moniro`), NATS and Redis on
   * the given URLs, the gateway on `gatewayPort` (0: any), its log lines into `lines` (none: quiet).
   */
  function upOptions(
    root: string,
    servers: { natsUrl: string; redisUrl: string; gatewayPort?: number },
    lines?: string[],
  ): StartStackOptions {
    return {
      root,
      cwd: root,
      projectDir: root,
      dataDir: join(root, ".moniro"),
      natsUrl: servers.natsUrl,
      redisUrl: servers.redisUrl,
      gatewayPort: servers.gatewayPort ?? 0,
      basePort: 0,
      agentsDir: join(root, ".agents"),
      workspacesDir: join(root, ".moniro", "workspaces"),
      env: { PATH: process.env.PATH },
      spawn: spawnChild,
      terminal: { colour: false, line: (text) => lines?.push(text) },
      printLogs: lines !== undefined,
      graceMs: 5_000,
    };
  }

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

  it("starts private NATS and Redis with authentication when they do not answer, then every service logged in as its own NATS user and the services' Redis user; prints prefixed logs; stops all", async () => {
    const root = fakeRepository();
    const [natsPort, redisPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
    const lines: string[] = [];
    const stack = await startStack({
      ...upOptions(
        root,
        { natsUrl: `nats://127.0.0.1:${natsPort}`, redisUrl: `redis://127.0.0.1:${redisPort}`, gatewayPort },
        lines,
      ),
      // As stackOptions makes them for `--namespace uptest`.
      namespace: "uptest",
      redisPrefix: "uptest:",
    });
    try {
      expect(stack.startedServers).toEqual(["nats", "redis"]);
      expect(await tcpAnswers("127.0.0.1", natsPort)).toBe(true);
      expect(await tcpAnswers("127.0.0.1", redisPort)).toBe(true);
      expect(stack.services.map((s) => s.service).sort()).toEqual([...STACK_SERVICES].sort());
      const gateway = stack.services.find((s) => s.service === "gateway");
      expect(gateway?.port).toBe(gatewayPort);
      expect((await fetch(`${gateway?.url}/readyz`)).status).toBe(200);
      for (const service of STACK_SERVICES) {
        const ready = new RegExp(
          `^\\[${service}\\] +INFO {2}ready on \\d+ nats nats://127\\.0\\.0\\.1:\\d+ as ${service}$`,
        );
        expect(
          lines.some((l) => ready.test(l)),
          service,
        ).toBe(true);
      }
      // Both servers refuse a client without credentials and accept the generated ones.
      const file = join(root, ".moniro", CREDENTIALS_FILE);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const stored = JSON.parse(readFileSync(file, "utf8"));
      expect(await natsAnswer(natsPort)).toMatch(/Authorization Violation/);
      expect(await redisAnswer(redisPort)).toMatch(/^-NOAUTH/);
      expect(await redisAnswer(redisPort, { username: "default", password: "" })).toMatch(/^-WRONGPASS/);
      expect(await natsAnswer(natsPort, { user: stored.nats.user, pass: stored.nats.password })).toBe("PONG");
      expect(await redisAnswer(redisPort, stored.redis)).toBe("+PONG");
      expect(await redisAnswer(redisPort, stored.redis.services)).toBe("+PONG");
      for (const name of ["nats", "redis"]) {
        expect(statSync(join(root, ".moniro", name, `${name}.conf`)).mode & 0o777).toBe(0o600);
      }
      // Each service user has only its subjects, in the stack's namespace (and its streams: UPTEST_MONIRO_IN…).
      const as = (user: string) => ({ user, pass: stored.nats.services[user] });
      const pub = (subject: string) => `PUB ${subject} 0\r\n\r\n`;
      const consumeIn = pub(`$JS.API.CONSUMER.DURABLE.CREATE.${createSubjects("uptest").streams.in}.agent-runner`);
      expect(await natsAnswer(natsPort, as("signal-bridge"), consumeIn)).toMatch(/Permissions Violation for Publish/);
      expect(await natsAnswer(natsPort, as("signal-bridge"), pub("uptest.dlq.in"))).toMatch(
        /Permissions Violation for Publish to "uptest\.dlq\.in"/,
      );
      expect(await natsAnswer(natsPort, as("signal-bridge"), "SUB uptest.tool.> 1\r\n")).toMatch(
        /Permissions Violation for Subscription/,
      );
      expect(await natsAnswer(natsPort, as("scheduler"), pub("uptest.ctl.alice"))).toMatch(/Permissions Violation/);
      // ...and may do what its service does.
      expect(await natsAnswer(natsPort, as("signal-bridge"), pub("uptest.in.alice"))).toBe("PONG");
      expect(await natsAnswer(natsPort, as("agent-runner"), consumeIn + pub("uptest.dlq.in"))).toBe("PONG");
      // The subjects of another namespace are nobody's but yours.
      expect(await natsAnswer(natsPort, as("gateway"), pub("moniro.in.alice"))).toMatch(/Permissions Violation/);
      const operator = { user: stored.nats.user, pass: stored.nats.password };
      expect(await natsAnswer(natsPort, operator, pub("uptest.dlq.in") + pub("moniro.in.alice"))).toBe("PONG");
      expect(await natsAnswer(natsPort, { user: "gateway", pass: stored.nats.services.scheduler })).toMatch(
        /Authorization Violation/,
      );
      // Every service but the bridge logged in to Redis as the services' user, never as yours.
      for (const service of STACK_SERVICES.filter((s) => s !== "signal-bridge")) {
        expect(lines, service).toContainEqual(
          expect.stringMatching(new RegExp(`^\\[${service}\\] +INFO {2}redis as services$`)),
        );
      }
      // That user may not wipe Redis, change it, list every key or touch a key outside the stack's prefix...
      const services = stored.redis.services;
      expect(services.username).toBe("services");
      expect(await redisAnswer(redisPort, services, [["FLUSHALL"]])).toMatch(/^-NOPERM .*'flushall'/);
      expect(await redisAnswer(redisPort, services, [["CONFIG", "SET", "appendonly", "no"]])).toMatch(/^-NOPERM/);
      expect(await redisAnswer(redisPort, services, [["KEYS", "*"]])).toMatch(/^-NOPERM/);
      expect(await redisAnswer(redisPort, services, [["SET", "moniro:agent:x", "1"]])).toMatch(/^-NOPERM .*keys/);
      expect(await redisAnswer(redisPort, services, [["GET", "other-app:secret"]])).toMatch(/^-NOPERM .*keys/);
      // ...but does what the services do under it.
      expect(
        await redisAnswer(redisPort, services, [
          ["SET", "uptest:probe", "1"],
          ["INFO", "server"],
        ]),
      ).toBe("+PONG");
      expect(await redisAnswer(redisPort, services, [["CLIENT", "ID"]])).toBe("+PONG");
      // Yours may do everything (on this private Redis).
      expect(
        await redisAnswer(redisPort, stored.redis, [
          ["SET", "moniro:agent:x", "1"],
          ["CONFIG", "GET", "appendonly"],
          ["KEYS", "*"],
        ]),
      ).toBe("+PONG");
      // The stack still answers.
      expect((await fetch(`${gateway?.url}/readyz`)).status).toBe(200);
      // No password on the terminal, in a log's command line or in a config file (NATS reads them from its environment).
      const printed = [...lines, ...["nats", "redis"].map((n) => readFileSync(stack.logFile(n), "utf8"))].join("\n");
      const natsPasswords = [stored.nats.password, ...Object.values(stored.nats.services)] as string[];
      for (const secret of [...natsPasswords, stored.redis.password, services.password]) {
        expect(printed).not.toContain(secret);
      }
      const natsConf = readFileSync(join(root, ".moniro", "nats", "nats.conf"), "utf8");
      for (const secret of natsPasswords) expect(natsConf).not.toContain(secret);
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

  it("migrates the credentials of an older moniro up (one NATS and one Redis login for all): both stay yours with new passwords, the services get their own", async () => {
    const root = fakeRepository();
    const dataDir = join(root, ".moniro");
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // As an older version wrote it: base64url passwords (this one starts with '-', which NATS reads as a number unquoted).
    const old = {
      nats: { user: "moniro", password: "-older_NATS-password_0123456789" },
      redis: { username: "moniro", password: "older_Redis-password_0123456789" },
    };
    writeFileSync(join(dataDir, CREDENTIALS_FILE), JSON.stringify(old), { mode: 0o600 });
    const [natsPort, redisPort] = [await freePort(), await freePort()];
    const lines: string[] = [];
    const stack = await startStack(
      upOptions(root, { natsUrl: `nats://127.0.0.1:${natsPort}`, redisUrl: `redis://127.0.0.1:${redisPort}` }, lines),
    );
    try {
      const stored = JSON.parse(readFileSync(join(dataDir, CREDENTIALS_FILE), "utf8"));
      expect(stored.nats.user).toBe("moniro");
      expect(stored.nats.password).not.toBe(old.nats.password);
      expect(Object.keys(stored.nats.services).sort()).toEqual([...STACK_SERVICES].sort());
      expect(lines.some((l) => l.includes("added a NATS password for"))).toBe(true);
      expect(lines.some((l) => l.includes("a new password for your NATS login 'moniro'"))).toBe(true);
      expect(lines.some((l) => l.includes("a new password for your Redis login 'moniro'"))).toBe(true);
      // The old Redis password, which every service of the older `up` had, opens nothing any more.
      expect(await redisAnswer(redisPort, old.redis)).toMatch(/^-WRONGPASS/);
      expect(stored.redis.username).toBe("moniro");
      expect(await redisAnswer(redisPort, stored.redis, [["CONFIG", "GET", "appendonly"]])).toBe("+PONG");
      expect(await redisAnswer(redisPort, stored.redis.services, [["FLUSHALL"]])).toMatch(/^-NOPERM/);
      for (const service of STACK_SERVICES.filter((s) => s !== "signal-bridge")) {
        expect(lines, service).toContainEqual(
          expect.stringMatching(new RegExp(`^\\[${service}\\] +INFO {2}redis as services$`)),
        );
      }
      for (const service of STACK_SERVICES) {
        expect(
          lines.some((l) => l.startsWith(`[${service}]`) && l.endsWith(` as ${service}`)),
          service,
        ).toBe(true);
      }
      // The old NATS password opens nothing any more either; yours does.
      expect(await natsAnswer(natsPort, { user: "moniro", pass: old.nats.password })).toMatch(/^-ERR/);
      expect(await natsAnswer(natsPort, { user: "moniro", pass: stored.nats.password })).toBe("PONG");
      expect(lines.join("\n")).not.toContain(old.nats.password);
      expect(lines.join("\n")).not.toContain(stored.redis.password);
    } finally {
      await stack.stop();
    }
  });

  it("keeps what the services wrote with scripts and transactions when its Redis restarts from the AOF", async () => {
    const root = fakeRepository();
    const dataDir = join(root, ".moniro");
    const [natsPort, redisPort] = [await freePort(), await freePort()];
    const start = () =>
      startStack(
        upOptions(root, { natsUrl: `nats://127.0.0.1:${natsPort}`, redisUrl: `redis://127.0.0.1:${redisPort}` }),
      );
    const first = await start();
    const services = () => JSON.parse(readFileSync(join(dataDir, CREDENTIALS_FILE), "utf8")).redis.services;
    try {
      // As the store writes: a Lua script (its effects reach the AOF as MULTI/EXEC), and a transaction.
      const script = "redis.call('set', KEYS[1], ARGV[1]) redis.call('incr', KEYS[2]) return 1";
      expect(
        await redisAnswer(redisPort, services(), [
          ["EVAL", script, "2", "moniro:{a}:x", "moniro:{a}:n", "kept"],
          ["MULTI"],
          ["SET", "moniro:{a}:t", "kept"],
          ["EXEC"],
        ]),
      ).toBe("+PONG");
    } finally {
      await first.stop();
    }
    expect(await tcpAnswers("127.0.0.1", redisPort)).toBe(false);
    const second = await start();
    try {
      expect(second.startedServers).toContain("redis");
      const check =
        "if redis.call('get', KEYS[1]) == 'kept' and redis.call('get', KEYS[2]) == '1' and redis.call('get', KEYS[3]) == 'kept' " +
        "then return 1 else return redis.error_reply('LOST what was written before the restart') end";
      expect(
        await redisAnswer(redisPort, services(), [
          ["EVAL", check, "3", "moniro:{a}:x", "moniro:{a}:n", "moniro:{a}:t"],
        ]),
      ).toBe("+PONG");
      // Still nobody gets in as `default`.
      expect(await redisAnswer(redisPort, { username: "default", password: "" })).toMatch(/^-WRONGPASS/);
      expect(await redisAnswer(redisPort)).toMatch(/^-NOAUTH/);
    } finally {
      await second.stop();
    }
  });

  it("refuses a key prefix the services' Redis user cannot be restricted to, naming MONIRO_REDIS_PREFIX, before starting anything", async () => {
    const root = fakeRepository();
    const spawned: string[] = [];
    const recordingSpawn: Spawner = (request) => {
      spawned.push([request.command, ...request.args].join(" "));
      return spawnChild(request);
    };
    const [natsPort, redisPort] = [await freePort(), await freePort()];
    const attempt = startStack({
      ...upOptions(root, { natsUrl: `nats://127.0.0.1:${natsPort}`, redisUrl: `redis://127.0.0.1:${redisPort}` }),
      redisPrefix: "team a:",
      spawn: recordingSpawn,
    });
    await expect(attempt).rejects.toThrow(StackConfigError);
    await expect(attempt).rejects.toThrow(
      "MONIRO_REDIS_PREFIX (--redis-prefix): the Redis key prefix 'team a:' cannot be an ACL key pattern",
    );
    // Neither server was started (both would have been: nothing answers on their ports).
    expect(spawned).toEqual([]);
    expect(await tcpAnswers("127.0.0.1", natsPort)).toBe(false);
  });

  it("refuses a port that is taken, naming the service and the flags, and leaves nothing running", async () => {
    const root = fakeRepository();
    const blocker = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => blocker.once("listening", resolve));
    const address = blocker.address();
    const taken = typeof address === "object" && address ? address.port : 0;
    // Every process startStack starts goes through its spawner: recording it shows what was started.
    const spawned: string[] = [];
    const recordingSpawn: Spawner = (request) => {
      spawned.push([request.command, ...request.args].join(" "));
      return spawnChild(request);
    };
    try {
      const attempt = startStack({
        ...upOptions(root, {
          natsUrl: process.env.MONIRO_TEST_NATS_URL ?? "nats://127.0.0.1:4222",
          redisUrl: process.env.MONIRO_TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
          gatewayPort: taken,
        }),
        spawn: recordingSpawn,
      });
      await expect(attempt).rejects.toThrow(`port ${taken} (gateway) is already in use`);
      // The test's NATS and Redis answer, so no server is started either: the refusal comes before any process.
      expect(spawned).toEqual([]);
    } finally {
      blocker.close();
    }
  });
});
