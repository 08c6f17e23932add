import type { StackService } from "./stack-services.js";

/**
 * Which of the parent's variables one service of `moniro up` may see. Every
 * service process is readable by an agent's command that escapes its sandbox,
 * so each gets only what it uses: the platform's variables, the non-secret
 * MONIRO_* settings, and the credentials of its own connections.
 */

/** Variables of the platform and of Node itself, passed to every service. */
const PLATFORM_NAMES = new Set(["PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "NO_COLOR"]);
const PLATFORM_PREFIXES = ["LC_", "NODE_", "OTEL_"];

/** A name that carries a credential (mirrors the deploy artefacts' rule for Secrets). */
const CREDENTIAL = /(KEY|KEYS|TOKEN|PASSWORD|SECRET|USERNAME|USER|SEED_FILE|CREDS_FILE)$/;
/**
 * The NATS password of one service user (`MONIRO_NATS_PASSWORD_AGENT_RUNNER`, what nats-server reads):
 * no service sees it under that name; stack-plan.ts makes the service's own its MONIRO_NATS_PASSWORD.
 */
const USER_PASSWORD = /^MONIRO_NATS_PASSWORD_/;

/** Credentials every service that talks to NATS needs. */
const NATS_CREDENTIALS = [
  "MONIRO_NATS_USER",
  "MONIRO_NATS_PASSWORD",
  "MONIRO_NATS_TOKEN",
  "MONIRO_NATS_NKEY_SEED_FILE",
  "MONIRO_NATS_CREDS_FILE",
];
const REDIS_CREDENTIALS = ["MONIRO_REDIS_USERNAME", "MONIRO_REDIS_PASSWORD"];

/**
 * Per service: the credentials it uses, secrets only it gets (by prefix), the settings only it reads,
 * and whether it talks to Redis (a service that does not sees no `MONIRO_REDIS_*`: a URL can hold a password).
 */
const OWN: Record<
  StackService,
  { credentials: string[]; secretPrefixes?: string[]; prefixes: string[]; noRedis?: true }
> = {
  gateway: {
    credentials: [...NATS_CREDENTIALS, ...REDIS_CREDENTIALS, "MONIRO_API_KEYS"],
    // Webhook secrets (`secret_env` / `token_env` of a hook) reach the gateway when named MONIRO_HOOK_*.
    secretPrefixes: ["MONIRO_HOOK_"],
    prefixes: ["MONIRO_GATEWAY_", "MONIRO_HOOK_"],
  },
  "agent-runner": {
    credentials: [...NATS_CREDENTIALS, ...REDIS_CREDENTIALS, "ANTHROPIC_API_KEY"],
    prefixes: ["ANTHROPIC_", "MONIRO_LLM_", "MONIRO_MOCK_", "MONIRO_LEASE_", "MONIRO_THREAD_", "MONIRO_RUNNER_"],
  },
  "tool-executor": {
    credentials: [...NATS_CREDENTIALS, ...REDIS_CREDENTIALS],
    prefixes: ["MONIRO_EXEC", "MONIRO_TOOL_", "MONIRO_PROCESS_", "MONIRO_MAX_BACKGROUND_"],
  },
  scheduler: { credentials: [...NATS_CREDENTIALS, ...REDIS_CREDENTIALS], prefixes: ["MONIRO_SCHEDULER_"] },
  // The bridge talks to NATS and signal-cli only, never to Redis.
  "signal-bridge": { credentials: [...NATS_CREDENTIALS], prefixes: ["MONIRO_SIGNAL_"], noRedis: true },
};

/** Settings with a service prefix belong to that service alone. */
const SERVICE_PREFIXES = Object.values(OWN).flatMap((own) => own.prefixes);

/** Whether `service` may see the parent's variable `name`. */
export function serviceMaySee(service: StackService, name: string): boolean {
  if (PLATFORM_NAMES.has(name) || PLATFORM_PREFIXES.some((p) => name.startsWith(p))) return true;
  const own = OWN[service];
  if (own.noRedis && name.startsWith("MONIRO_REDIS_")) return false;
  if (own.credentials.includes(name)) return true;
  if (own.secretPrefixes?.some((p) => name.startsWith(p))) return true;
  if (CREDENTIAL.test(name) || USER_PASSWORD.test(name)) return false;
  if (own.prefixes.some((p) => name.startsWith(p))) return true;
  if (SERVICE_PREFIXES.some((p) => name.startsWith(p))) return false;
  return name.startsWith("MONIRO_");
}

/** The part of `parentEnv` that `service` may see. */
export function serviceEnvironment(
  service: StackService,
  parentEnv: Record<string, string | undefined>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value !== undefined && serviceMaySee(service, name)) env[name] = value;
  }
  return env;
}
