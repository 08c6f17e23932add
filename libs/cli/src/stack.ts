import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createSubjects } from "@moniro/envelopes";
import type { ChildHandle, Spawner } from "./child-handle.js";
import { choosePorts } from "./free-ports.js";
import { findExecutable, planServers, type ServerPlan, serverConfigFile, serverSearchDirs } from "./infra.js";
import { formatLogLine, LineSplitter } from "./log-format.js";
import { waitUntilAnswers, waitUntilReady } from "./readiness.js";
import {
  CREDENTIALS_FILE,
  credentialsFor,
  localServerCredentials,
  natsConfig,
  natsPasswordEnvironment,
  redisConfig,
  type StoredCredentials,
  servicesRedisRules,
  writePrivateFile,
} from "./server-auth.js";
import { planService, STACK_SERVICES, type StackOptions, type StackService } from "./stack-plan.js";
import { type StopReport, Supervisor } from "./supervisor.js";
import { tcpAnswers } from "./tcp-probe.js";

export interface Terminal {
  /** A line for the user (already formatted). */
  line(text: string): void;
  colour: boolean;
}

export interface StartStackOptions extends StackOptions {
  env: Record<string, string | undefined>;
  spawn: Spawner;
  terminal: Terminal;
  /** Print the services' log lines (up) or only keep them in .moniro/logs (demo). */
  printLogs: boolean;
  readyTimeoutMs?: number;
  graceMs?: number;
  /** Pass one in to be able to stop a stack that is still starting (Ctrl-C during startup). */
  supervisor?: Supervisor;
}

export interface RunningStack {
  services: Array<{ service: StackService; port: number; url: string }>;
  namespace?: string;
  redisPrefix?: string;
  startedServers: string[];
  supervisor: Supervisor;
  logFile(name: string): string;
  stop(): Promise<StopReport[]>;
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 20): string {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/**
 * Brings up the local stack: NATS and Redis (started from PATH when they do not
 * answer, with authentication: credentials generated once into the data dir;
 * NATS with a user per service holding only its subjects in the stack's
 * namespace, Redis with the services' user allowed only keys under the stack's
 * prefix and no `@dangerous` command), then the five services as child
 * processes, each waited for on /readyz, each with only its own part of the
 * environment and, for a NATS started here, its own NATS user. A server that
 * already answers is used as the user configured it (MONIRO_NATS_USER, … from
 * the environment). On any failure everything started so far is stopped again.
 */
export async function startStack(requested: StartStackOptions): Promise<RunningStack> {
  const options = await choosePorts(requested);
  const { terminal } = options;
  const logsDir = join(options.dataDir, "logs");
  mkdirSync(logsDir, { recursive: true });
  const logFile = (name: string) => join(logsDir, `${name}.log`);
  const supervisor = options.supervisor ?? new Supervisor(options.graceMs);
  const names = [...STACK_SERVICES, "nats", "redis"];
  const width = Math.max(...names.map((n) => n.length));
  const startedServers: string[] = [];

  const launch = (name: string, command: string, args: string[], env: Record<string, string>, print: boolean) => {
    const splitter = new LineSplitter();
    const colourIndex = names.indexOf(name);
    appendFileSync(logFile(name), `--- ${new Date().toISOString()} ${command} ${args.join(" ")}\n`);
    return options.spawn({
      command,
      args,
      env,
      cwd: options.cwd,
      onOutput: (chunk) => {
        appendFileSync(logFile(name), chunk);
        if (!print) return;
        for (const line of splitter.push(chunk)) {
          terminal.line(formatLogLine(name, colourIndex, line, { colour: terminal.colour, width }));
        }
      },
    });
  };

  // Read (or generated) once, and only when a server is started here.
  let stored: StoredCredentials | undefined;
  const storedCredentials = () => {
    stored ??= localServerCredentials(options.dataDir, (note) => terminal.line(note));
    return stored;
  };
  try {
    const plans = await planServers({ nats: options.natsUrl, redis: options.redisUrl }, options.dataDir, {
      answers: (host, port) => tcpAnswers(host, port),
      findExecutable: (name) => findExecutable(name, serverSearchDirs(options.env)),
    });
    // The services' user of a Redis started here: checked before any server starts (a prefix that
    // cannot be an ACL key pattern is a configuration error naming MONIRO_REDIS_PREFIX).
    const redisRules = plans.some((plan) => plan.name === "redis" && plan.start)
      ? servicesRedisRules(options.redisPrefix)
      : [];
    for (const plan of plans) {
      if (supervisor.isStopping) throw new Error("interrupted");
      const [command, ...args] = plan.start ?? [];
      if (!command) {
        terminal.line(`${plan.name}: answering at ${plan.endpoint.host}:${plan.endpoint.port}`);
        continue;
      }
      const credentials = storedCredentials();
      // The subjects of the stack's namespace (the services' default when none is given).
      const namespace = createSubjects(options.namespace).namespace;
      writeServerConfig(plan, options.dataDir, credentials, namespace, redisRules);
      const users =
        plan.name === "nats"
          ? " (a user per service)"
          : ` (the services' user: keys under ${options.redisPrefix ?? "moniro:"} only)`;
      terminal.line(
        `${plan.name}: not answering; starting ${command} with authentication${users} ` +
          `(data in ${join(options.dataDir, plan.name)}, credentials in ${join(options.dataDir, CREDENTIALS_FILE)})`,
      );
      // nats-server reads the passwords from its environment; redis-server from its config file.
      const env = {
        ...serverEnv(options.env),
        ...(plan.name === "nats" ? natsPasswordEnvironment(credentials.nats) : {}),
      };
      const handle = launch(plan.name, command, args, env, false);
      supervisor.add({ name: plan.name, handle, tier: "server" });
      await waitUntilAnswers(() => tcpAnswers(plan.endpoint.host, plan.endpoint.port), handle, command).catch(
        (error: Error) => {
          throw new Error(`${error.message}\n${tail(logFile(plan.name))}`);
        },
      );
      startedServers.push(plan.name);
    }

    // Credentials only for servers started here; one already answering is used as configured.
    const started = startedServers as Array<"nats" | "redis">;
    const credentials = started.length > 0 ? credentialsFor(started, storedCredentials()) : {};
    const launches = STACK_SERVICES.map((service) => planService(service, { ...options, credentials }, options.env));
    for (const plan of launches) {
      const { entry } = plan;
      if (!existsSync(entry)) {
        const source = join(options.root, "services", plan.service, "src", "main.ts");
        throw new Error(
          existsSync(source)
            ? `${entry} does not exist: build first with 'npx tsc --build' (npm run up / npm run demo do)`
            : `${plan.service} has no ${source}: this checkout does not contain the service yet`,
        );
      }
      if (await tcpAnswers("127.0.0.1", plan.port)) {
        throw new Error(
          `port ${plan.port} (${plan.service}) is already in use — is another 'moniro up' running? ` +
            "Stop it, or choose other ports with --gateway-port / --base-port.",
        );
      }
    }
    const handles = new Map<StackService, ChildHandle>();
    for (const plan of launches) {
      if (supervisor.isStopping) throw new Error("interrupted");
      const handle = launch(plan.service, plan.command, plan.args, plan.env, options.printLogs);
      handles.set(plan.service, handle);
      supervisor.add({ name: plan.service, handle, tier: "service" });
      void handle.exited.then((status) => {
        if (!supervisor.isStopping) {
          terminal.line(
            `${plan.service} exited unexpectedly (code ${status.code ?? "-"}, signal ${status.signal ?? "-"}); log: ${logFile(plan.service)}`,
          );
        }
      });
    }
    await Promise.all(
      launches.map(async (plan) => {
        const handle = handles.get(plan.service);
        if (!handle) return;
        try {
          await waitUntilReady({ url: plan.readyUrl, handle, timeoutMs: options.readyTimeoutMs ?? 30_000 });
        } catch (error) {
          throw new Error(`${plan.service} ${(error as Error).message}\n${tail(logFile(plan.service))}`);
        }
      }),
    );
    return {
      services: launches.map((p) => ({ service: p.service, port: p.port, url: `http://127.0.0.1:${p.port}` })),
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.redisPrefix ? { redisPrefix: options.redisPrefix } : {}),
      startedServers,
      supervisor,
      logFile,
      stop: () => supervisor.stopAll(),
    };
  } catch (error) {
    await supervisor.stopAll();
    throw error;
  }
}

/**
 * The config file of a server `up` starts (mode 0600): NATS's users for `namespace`; Redis's
 * users with their passwords, the services' with `redisRules`.
 */
function writeServerConfig(
  plan: ServerPlan,
  dataDir: string,
  stored: StoredCredentials,
  namespace: string,
  redisRules: readonly string[],
): void {
  const dir = join(dataDir, plan.name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const text =
    plan.name === "nats"
      ? natsConfig(plan.endpoint.port, dir, namespace, stored.nats.user)
      : redisConfig(plan.endpoint.port, dir, stored.redis, redisRules);
  writePrivateFile(serverConfigFile(plan.name, dataDir), text);
}

/** Servers get the platform's variables only (plus, for NATS, the passwords it checks): none of the services' keys. */
function serverEnv(env: Record<string, string | undefined>): Record<string, string> {
  const keep = ["PATH", "HOME", "LANG", "TZ", "TMPDIR"];
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && keep.includes(e[0])),
  );
}
