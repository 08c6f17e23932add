import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A redis-server or nats-server of a test's own, on a port of its own, for
 * tests that stop or restart a server (never the shared ones). Its data
 * directory survives `stop()` + `start()` (a restart) and is removed by
 * `destroy()`.
 */
export interface PrivateServer {
  url: string;
  port: number;
  /** Starts the server (again) on the same port and data directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM (a clean shutdown: Redis writes its AOF, NATS its JetStream store) and waits for the exit. */
  stop(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>;
}

function privateServer(
  url: string,
  port: number,
  command: string,
  args: string[],
  dir: string,
  env?: Record<string, string>,
): PrivateServer {
  let child: ChildProcess | undefined;
  let stopping = false;
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    stopping = true;
    running.kill("SIGTERM");
    await exited;
  };
  return {
    url,
    port,
    async start() {
      stopping = false;
      const output: string[] = [];
      const started = spawn(command, args, {
        stdio: ["ignore", "pipe", "pipe"],
        ...(env ? { env: { ...process.env, ...env } } : {}),
      });
      started.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
      started.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
      started.once("exit", (code) => {
        if (!stopping) console.error(`${command} exited with ${code}:\n${output.join("")}`);
      });
      child = started;
      await listening(
        port,
        () => started.exitCode !== null,
        () => output.join(""),
      );
    },
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function listening(port: number, exited: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`the server on port ${port} exited at start:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nothing listens on port ${port} after 10 s:\n${output()}`);
}

/**
 * A private Redis; `persistent` keeps its data across a restart (AOF, fsync on every write);
 * `args`: more of redis-server's arguments (e.g. `--user …` ACL rules).
 */
export function privateRedis(port: number, options: { persistent?: boolean; args?: string[] } = {}): PrivateServer {
  const dir = mkdtempSync(join(tmpdir(), "moniro-redis-"));
  const persistence = options.persistent ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
  return privateServer(
    `redis://127.0.0.1:${port}`,
    port,
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--dir",
      dir,
      ...persistence,
      ...(options.args ?? []),
    ],
    dir,
  );
}

/** A private NATS with JetStream; its file store survives a restart. */
export function privateNats(port: number): PrivateServer {
  const dir = mkdtempSync(join(tmpdir(), "moniro-nats-"));
  return privateServer(
    `nats://127.0.0.1:${port}`,
    port,
    "nats-server",
    ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir],
    dir,
  );
}

/**
 * A private NATS started from a config file (`nats-server -c`): users,
 * tokens, nkeys, permissions, TLS. `config` is the file's body without
 * `listen`, `jetstream` (added here) and receives the server's directory, so
 * it can point at certificates written there. `env` is the server's extra
 * environment, for `$VARIABLE` references in the config.
 */
export function privateNatsWithConfig(
  port: number,
  config: (dir: string) => string,
  env?: Record<string, string>,
): PrivateServer & { dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "moniro-nats-conf-"));
  const file = join(dir, "nats.conf");
  writeFileSync(
    file,
    `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(join(dir, "js"))} }\n${config(dir)}\n`,
  );
  return { ...privateServer(`nats://127.0.0.1:${port}`, port, "nats-server", ["-c", file], dir, env), dir };
}
