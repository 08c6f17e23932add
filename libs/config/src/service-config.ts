import { nameSchema } from "@moniro/envelopes";
import { z } from "zod";

/**
 * Settings every service reads from its environment. Each field names the
 * environment variable it comes from, so a config error says exactly what to fix.
 */
const TRUE_WORDS = ["true", "1", "yes", "on"];
const FALSE_WORDS = ["false", "0", "no", "off"];

/**
 * A boolean environment variable: true/false, 1/0, yes/no, on/off, in any case. A wrong value is
 * echoed with what is accepted (parseEnv puts the variable's name in front).
 */
export const envFlag = z.string().transform((value, ctx) => {
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  ctx.addIssue({
    code: "custom",
    message: `'${value}' is not true or false (accepted, in any case: true/false, 1/0, yes/no, on/off)`,
  });
  return z.NEVER;
});

export const serviceConfigSchema = z.object({
  /** One server or a comma-separated list; `tls://` (or any MONIRO_NATS_TLS_* file) turns TLS on. */
  MONIRO_NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  MONIRO_NATS_USER: z.string().optional(),
  MONIRO_NATS_PASSWORD: z.string().optional(),
  MONIRO_NATS_TOKEN: z.string().optional(),
  /** File holding an nkey seed (`SU…`): nkey authentication. */
  MONIRO_NATS_NKEY_SEED_FILE: z.string().optional(),
  /** A `.creds` file (user JWT + nkey seed): decentralised JWT authentication. */
  MONIRO_NATS_CREDS_FILE: z.string().optional(),
  /** PEM files for TLS: the CA that signed the server, and a client certificate + key for mutual TLS. */
  MONIRO_NATS_TLS_CA_FILE: z.string().optional(),
  MONIRO_NATS_TLS_CERT_FILE: z.string().optional(),
  MONIRO_NATS_TLS_KEY_FILE: z.string().optional(),
  /** Subject namespace; `moniro` is the public contract, tests use a random one. */
  MONIRO_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_-]+$/, "must be a single subject token of a-z, 0-9, '_' or '-'")
    .default("moniro"),
  /**
   * `redis://` or `rediss://` (TLS). With MONIRO_REDIS_CLUSTER=true, a
   * comma-separated list of seed nodes of a Redis Cluster.
   */
  MONIRO_REDIS_URL: z.string().default("redis://127.0.0.1:6379"),
  /** ACL user and password (override any in the URL; kept out of logs). */
  MONIRO_REDIS_USERNAME: z.string().optional(),
  MONIRO_REDIS_PASSWORD: z.string().optional(),
  /** PEM file of the CA that signed Redis's certificate (TLS; implies TLS). */
  MONIRO_REDIS_TLS_CA_FILE: z.string().optional(),
  /** Connect to a Redis Cluster (MONIRO_REDIS_URL lists seed nodes). */
  MONIRO_REDIS_CLUSTER: envFlag.default(false),
  /** Prefix of every Redis key. No braces: each key's Redis Cluster hash tag is the store's to choose. */
  MONIRO_REDIS_PREFIX: z
    .string()
    .regex(/^[^{}\s]*$/, "must not contain '{', '}' or whitespace (hash tags are chosen by the key layout)")
    .default("moniro:"),
  /** Directory of agent definitions (`<name>.yaml`). */
  MONIRO_AGENTS_DIR: z.string().default(".agents"),
  /** Root of the agents' workspaces (`<root>/<agent>/`). */
  MONIRO_WORKSPACES_DIR: z.string().default(".moniro/workspaces"),
  /** HTTP port for health, readiness and metrics (gateway: also the API). 0 picks a free port. */
  MONIRO_HTTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  MONIRO_HTTP_HOST: z.string().default("127.0.0.1"),
  MONIRO_LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
});
export type ServiceConfig = z.infer<typeof serviceConfigSchema>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Parses `env` against a schema; an error lists every bad variable with the
 * reason, e.g. "MONIRO_HTTP_PORT: must be at most 65535".
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
  source = "environment",
): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  throw new ConfigError(`invalid configuration in ${source}:\n${lines.join("\n")}`);
}

export function loadServiceConfig(env: Record<string, string | undefined> = process.env): ServiceConfig {
  return parseEnv(serviceConfigSchema, env);
}

export { SERVICE_EXTRA_NODE_FLAGS, SERVICE_NODE_FLAGS, serviceNodeFlags } from "./node-flags.js";
export { nameSchema };
