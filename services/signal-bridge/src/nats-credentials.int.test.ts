import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const MAIN = resolve(import.meta.dirname, "..", "dist", "main.js");
const PASSWORD = "pw-that-must-never-be-logged";

// The repository's private-server helpers (test/support), loaded by path: it is not a workspace package.
interface PrivateServer {
  url: string;
  port: number;
  start(): Promise<void>;
  destroy(): Promise<void>;
}
const supportDir = fileURLToPath(new URL("../../../test/support/", import.meta.url));
const { privateNatsWithConfig } = (await import(join(supportDir, "private-servers.ts"))) as {
  privateNatsWithConfig(port: number, config: () => string): PrivateServer;
};
const { freePort } = (await import(join(supportDir, "ports.ts"))) as { freePort(): Promise<number> };

interface Started {
  child: ChildProcess;
  port: number;
  output: string[];
  exited: Promise<number | null>;
}

async function startBridge(natsUrl: string): Promise<Started> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run 'npx tsc --build' first`);
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      MONIRO_NATS_URL: natsUrl,
      MONIRO_NAMESPACE: `t${randomBytes(5).toString("hex")}`,
      MONIRO_HTTP_PORT: String(port),
      MONIRO_LOG_LEVEL: "debug",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, port, output, exited };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, started: Started): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} within 15 s:\n${started.output.join("")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a service given a NATS URL with a password never prints the password", () => {
  let server: PrivateServer;
  const running: Started[] = [];
  beforeAll(async () => {
    server = privateNatsWithConfig(
      await freePort(),
      () => `authorization { users = [ { user: "bridge", password: "${PASSWORD}" } ] }`,
    );
    await server.start();
  });
  afterEach(() => {
    for (const started of running.splice(0)) if (started.child.exitCode === null) started.child.kill("SIGKILL");
  });
  afterAll(() => server?.destroy());

  it("connects with it, and logs the URL as bridge:***@", async () => {
    const started = await startBridge(server.url.replace("nats://", `nats://bridge:${PASSWORD}@`));
    running.push(started);
    await until(
      async () => (await fetch(`http://127.0.0.1:${started.port}/readyz`).catch(() => undefined))?.status === 200,
      "not ready",
      started,
    );
    started.child.kill("SIGTERM");
    expect(await started.exited).toBe(0);
    const output = started.output.join("");
    expect(output).toContain(server.url.replace("nats://", "nats://bridge:***@"));
    expect(output).not.toContain(PASSWORD);
  });

  it("while the server is unreachable, and when it refuses a wrong password (exit 1, saying which login)", async () => {
    const unreachable = await startBridge(`nats://bridge:${PASSWORD}@127.0.0.1:${await freePort()}`);
    running.push(unreachable);
    await until(
      () => unreachable.output.join("").includes("NATS unreachable at"),
      "no 'unreachable' line",
      unreachable,
    );
    unreachable.child.kill("SIGTERM");
    await unreachable.exited;
    expect(unreachable.output.join("")).not.toContain(PASSWORD);

    const refused = await startBridge(server.url.replace("nats://", `nats://bridge:${PASSWORD}-wrong@`));
    running.push(refused);
    expect(await refused.exited).toBe(1);
    const output = refused.output.join("");
    expect(output).toContain("refused the user and password in MONIRO_NATS_URL (Authorization Violation)");
    expect(output).not.toContain(PASSWORD);
  });
});
