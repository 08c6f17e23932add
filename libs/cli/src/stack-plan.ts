import { resolve } from "node:path";
import { passwordVariable } from "@moniro/bus/nats-permissions";
import { serviceNodeFlags } from "@moniro/config/service";
import { serviceEnvironment } from "./service-env.js";

import { STACK_SERVICES, type StackService } from "./stack-services.js";

export { STACK_SERVICES, type StackService };

export interface StackOptions {
  /** The repository root holding `services/<svc>/dist/main.js`. */
  root: string;
  /** The user's directory: `.agents/` and `.moniro/` live here. */
  cwd: string;
  natsUrl: string;
  redisUrl: string;
  gatewayPort: number;
  /** agent-runner, tool-executor, scheduler, signal-bridge get basePort … basePort+3. 0: any free ports. */
  basePort: number;
  /** Ports already chosen (free ports picked for a 0 gateway or base port); these win. */
  ports?: Partial<Record<StackService, number>>;
  /** Agent definitions (`<cwd>/.agents` unless MONIRO_AGENTS_DIR says otherwise). */
  agentsDir: string;
  /** The project root whose moniro.yaml, when there is one, the gateway serves (`<cwd>` unless MONIRO_PROJECT_DIR says otherwise). */
  projectDir: string;
  /** Root of the agents' workspaces (`<dataDir>/workspaces` unless MONIRO_WORKSPACES_DIR says otherwise). */
  workspacesDir: string;
  /** First token of every subject (MONIRO_NAMESPACE); unset: the services' default, `moniro`. */
  namespace?: string;
  /** Prefix of every Redis key (MONIRO_REDIS_PREFIX); unset: the services' default, `moniro:`. */
  redisPrefix?: string;
  /** Local state: data of servers started by `up`, logs, workspaces. */
  dataDir: string;
  /** Credentials of the servers `up` started itself; they replace the parent's for that server. */
  credentials?: ServerCredentials;
}

export interface ServerCredentials {
  /** Per service: its own NATS user (named as the service) and password. */
  nats?: Record<StackService, { user: string; password: string }>;
  redis?: { username: string; password: string };
}

export const DEFAULT_GATEWAY_PORT = 8080;
export const DEFAULT_BASE_PORT = 9101;

const PORT_ORDER: Record<Exclude<StackService, "gateway">, number> = {
  "agent-runner": 0,
  "tool-executor": 1,
  scheduler: 2,
  "signal-bridge": 3,
};

export function servicePort(
  service: StackService,
  options: Pick<StackOptions, "gatewayPort" | "basePort" | "ports">,
): number {
  const chosen = options.ports?.[service];
  if (chosen !== undefined) return chosen;
  return service === "gateway" ? options.gatewayPort : options.basePort + PORT_ORDER[service];
}

export interface ServiceLaunch {
  service: StackService;
  command: string;
  args: string[];
  /** The service's compiled entry point (the last of `args`). */
  entry: string;
  env: Record<string, string>;
  port: number;
  readyUrl: string;
}

/**
 * How to start one service: `node <SERVICE_NODE_FLAGS> services/<svc>/dist/main.js` with the
 * part of the parent's environment that service may see (service-env.ts: no
 * other service's secret) plus the stack's wiring: the per-service port, the
 * URLs and credentials of the servers, directories, namespace and key prefix
 * `up` resolved (from flags, else the parent's MONIRO_* variables). The gateway
 * is open (no API key) unless the parent sets MONIRO_API_KEYS: the local stack
 * listens on loopback only.
 *
 * NATS login: for a NATS `up` started, the service's own user from `credentials`. For one
 * it did not start, the parent's MONIRO_NATS_USER / _PASSWORD / … as they are, unless the
 * parent sets `passwordVariable(service)` (MONIRO_NATS_PASSWORD_AGENT_RUNNER…, what
 * docker-compose's and k8s/'s NATS read): then the service logs in as its own user with it.
 */
export function planService(
  service: StackService,
  options: StackOptions,
  parentEnv: Record<string, string | undefined>,
  nodePath = process.execPath,
): ServiceLaunch {
  const port = servicePort(service, options);
  const entry = resolve(options.root, "services", service, "dist", "main.js");
  const { nats: natsUsers, redis } = options.credentials ?? {};
  const ownPassword = parentEnv[passwordVariable(service)];
  const nats = natsUsers?.[service] ?? (ownPassword ? { user: service, password: ownPassword } : undefined);
  const env: Record<string, string> = {
    ...(service === "gateway" && !parentEnv.MONIRO_API_KEYS ? { MONIRO_GATEWAY_OPEN: "true" } : {}),
    ...serviceEnvironment(service, parentEnv),
    MONIRO_NATS_URL: options.natsUrl,
    ...(nats ? { MONIRO_NATS_USER: nats.user, MONIRO_NATS_PASSWORD: nats.password } : {}),
    ...(service === "signal-bridge" ? {} : { MONIRO_REDIS_URL: options.redisUrl }),
    ...(redis && service !== "signal-bridge"
      ? { MONIRO_REDIS_USERNAME: redis.username, MONIRO_REDIS_PASSWORD: redis.password }
      : {}),
    MONIRO_AGENTS_DIR: options.agentsDir,
    ...(service === "gateway" ? { MONIRO_PROJECT_DIR: options.projectDir } : {}),
    MONIRO_WORKSPACES_DIR: options.workspacesDir,
    ...(options.namespace ? { MONIRO_NAMESPACE: options.namespace } : {}),
    ...(options.redisPrefix ? { MONIRO_REDIS_PREFIX: options.redisPrefix } : {}),
    MONIRO_HTTP_HOST: "127.0.0.1",
    MONIRO_HTTP_PORT: String(port),
    OTEL_SERVICE_NAME: service,
  };
  // An empty MONIRO_REDIS_PREFIX is no prefix of the stack's (cli-options.ts): the services' default,
  // `moniro:`, the one the services' user of a Redis `up` started may use.
  if (!options.redisPrefix && env.MONIRO_REDIS_PREFIX === "") delete env.MONIRO_REDIS_PREFIX;
  // A user of its own takes only its password: drop a token or key file meant for another login.
  if (nats)
    for (const name of ["MONIRO_NATS_TOKEN", "MONIRO_NATS_NKEY_SEED_FILE", "MONIRO_NATS_CREDS_FILE"]) delete env[name];
  return {
    service,
    command: nodePath,
    args: [...serviceNodeFlags(service), entry],
    entry,
    env,
    port,
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  };
}
