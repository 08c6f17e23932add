import { dirname, join } from "node:path";
import { envFlag, parseEnv, serviceConfigSchema } from "@moniro/config/service";
import { z } from "zod";
import { isLoopback } from "./http/loopback.js";
import { streamLimitsEnv } from "./nats/stream-limits-config.js";

/** `http://localhost:3000/` → `http://localhost:3000`; undefined when not a URL with an http(s) origin. */
function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A boolean variable (the shared parser: any case, a wrong value echoed); unset or empty is `fallback`. */
const flag = (fallback = false) =>
  z.preprocess(
    (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
    envFlag.default(fallback),
  );

/** `100kb`, `1mb`, `65536` → bytes. */
const byteSize = z
  .string()
  .regex(/^\d+(b|kb|mb)?$/i, "must be a size like 65536, 100kb or 1mb")
  .transform((value) => {
    const match = /^(\d+)(b|kb|mb)?$/i.exec(value);
    const amount = Number(match?.[1] ?? 0);
    const unit = (match?.[2] ?? "b").toLowerCase();
    return amount * (unit === "mb" ? 1024 * 1024 : unit === "kb" ? 1024 : 1);
  })
  .refine((bytes) => bytes >= 1024, "must be at least 1kb");

/**
 * The gateway's environment: the settings every service reads, plus API keys,
 * the open-access switch (loopback only) and the body limit. Errors name the variable.
 */
export const gatewayConfigSchema = serviceConfigSchema
  .extend(streamLimitsEnv)
  .extend({
    /** Comma-separated bearer keys; any one of them is accepted. */
    MONIRO_API_KEYS: z
      .string()
      .optional()
      .transform((value) =>
        (value ?? "")
          .split(",")
          .map((key) => key.trim())
          .filter((key) => key.length > 0),
      ),
    /** Accept requests without a key (local development only). */
    MONIRO_GATEWAY_OPEN: flag(),
    /** Older name of MONIRO_GATEWAY_OPEN, still set by `moniro up`. */
    MONIRO_AUTH_DISABLED: flag(),
    /** The shared field, read the same way as the gateway's own flags (any case, the value echoed). */
    MONIRO_REDIS_CLUSTER: flag(false),
    /** Web origins (`https://ui.example.com`) allowed to call an open gateway besides its own. */
    MONIRO_GATEWAY_ALLOWED_ORIGINS: z
      .string()
      .optional()
      .transform((value, ctx) => {
        const origins = (value ?? "")
          .split(",")
          .map((origin) => origin.trim())
          .filter((origin) => origin.length > 0);
        for (const origin of origins) {
          if (originOf(origin) !== origin) {
            ctx.addIssue({
              code: "custom",
              message: `'${origin}' is not an origin: write scheme, host and port only, like http://localhost:3000 (no path, no trailing slash)`,
            });
          }
        }
        return origins;
      }),
    /** Largest accepted request body. */
    MONIRO_GATEWAY_BODY_LIMIT: byteSize.default(256 * 1024),
    /** Largest accepted webhook body (providers send more than a DM: GitHub's push events run to hundreds of kB). */
    MONIRO_GATEWAY_HOOK_BODY_LIMIT: byteSize.default(1024 * 1024),
    /** Bytes that may wait for one slow SSE client before it is disconnected (`overflow` event; it resumes with Last-Event-ID). */
    MONIRO_GATEWAY_SSE_BUFFER: byteSize.default(1024 * 1024),
    /**
     * How long an SSE frame may wait to be joined with the frames that follow it, so every client gets
     * one socket write per burst instead of one per event batch (0: only the frames of one event-loop turn).
     */
    MONIRO_GATEWAY_SSE_FLUSH_MS: z.coerce.number().int().min(0).max(1_000).default(5),
    /** SSE heartbeat comment interval. */
    MONIRO_GATEWAY_HEARTBEAT_MS: z.coerce.number().int().min(100).default(15_000),
    /** How long a control request waits for an agent-runner's reply. */
    MONIRO_GATEWAY_CONTROL_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
    /** The workflow files (`<name>.yaml`); default `.workflows` next to MONIRO_AGENTS_DIR. */
    MONIRO_WORKFLOWS_DIR: z.string().min(1).optional(),
    /** The project root: its moniro.yaml, when there is one, registers the agents and workflows; default the parent of MONIRO_AGENTS_DIR. */
    MONIRO_PROJECT_DIR: z.string().min(1).optional(),
  })
  .transform((config) => ({
    ...config,
    MONIRO_PROJECT_DIR: config.MONIRO_PROJECT_DIR ?? dirname(config.MONIRO_AGENTS_DIR),
    MONIRO_WORKFLOWS_DIR: config.MONIRO_WORKFLOWS_DIR ?? join(dirname(config.MONIRO_AGENTS_DIR), ".workflows"),
    MONIRO_HTTP_PORT: config.MONIRO_HTTP_PORT ?? 8080,
    open: config.MONIRO_GATEWAY_OPEN || config.MONIRO_AUTH_DISABLED,
  }))
  .superRefine((config, ctx) => {
    if (!config.open && config.MONIRO_API_KEYS.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["MONIRO_API_KEYS"],
        message:
          "no API keys: set MONIRO_API_KEYS to one or more comma-separated keys, or MONIRO_GATEWAY_OPEN=true for open local access",
      });
    }
    if (config.open && !isLoopback(config.MONIRO_HTTP_HOST)) {
      ctx.addIssue({
        code: "custom",
        path: ["MONIRO_HTTP_HOST"],
        message: `open access (MONIRO_GATEWAY_OPEN or MONIRO_AUTH_DISABLED) listens on loopback only, but MONIRO_HTTP_HOST is '${config.MONIRO_HTTP_HOST}': set MONIRO_HTTP_HOST=127.0.0.1, or set MONIRO_API_KEYS and MONIRO_GATEWAY_OPEN=false to serve other machines`,
      });
    }
  });
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  return parseEnv(gatewayConfigSchema, env);
}
