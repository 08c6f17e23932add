import { envFlag, parseEnv, serviceConfigSchema } from "@moniro/config/service";
import { nameSchema } from "@moniro/envelopes";
import { z } from "zod";

/** An unset or empty variable both mean "not configured". */
const blankIsUnset = (value: unknown) => (value === "" ? undefined : value);

const optionalUrl = z.preprocess(
  blankIsUnset,
  z
    .url({ protocol: /^https?$/, error: "must be the http(s) URL of a signal-cli daemon (signal-cli daemon --http)" })
    .optional(),
);

const flag = (fallback: boolean) => z.preprocess(blankIsUnset, envFlag.default(fallback));

const positiveMs = (fallback: number) => z.preprocess(blankIsUnset, z.coerce.number().int().min(1).default(fallback));

export const signalBridgeConfigSchema = serviceConfigSchema.extend({
  /** signal-cli daemon base URL, e.g. http://127.0.0.1:8080; unset disables Signal. */
  MONIRO_SIGNAL_URL: optionalUrl,
  /** The account (+E.164) to use when the daemon runs in multi-account mode. */
  MONIRO_SIGNAL_ACCOUNT: z.preprocess(
    blankIsUnset,
    z
      .string()
      .regex(/^\+[1-9]\d{4,14}$/, "must be a phone number in E.164 form, e.g. +15551234567")
      .optional(),
  ),
  /** Optional YAML file with the agent mapping, allowlist and groups (docs/signal.md). */
  MONIRO_SIGNAL_CONFIG_FILE: z.preprocess(blankIsUnset, z.string().optional()),
  /** The agent every sender and group without a mapping goes to. */
  MONIRO_SIGNAL_DEFAULT_AGENT: z.preprocess(blankIsUnset, nameSchema.optional()),
  /** Comma-separated senders (+E.164 numbers or Signal uuids) let through without pairing. */
  MONIRO_SIGNAL_ALLOW: z.preprocess(
    blankIsUnset,
    z
      .string()
      .optional()
      .transform((value) =>
        (value ?? "")
          .split(",")
          .map((entry) => entry.trim())
          .filter(Boolean),
      ),
  ),
  /** Unknown senders get a pairing code (true) or are ignored (false). */
  MONIRO_SIGNAL_PAIRING: flag(true),
  /** Send read receipts for the messages an agent starts working on. */
  MONIRO_SIGNAL_READ_RECEIPTS: flag(false),
  /** An open event stream silent this long (no event, no keep-alive) is replaced; signal-cli sends a keep-alive every 15 s. */
  MONIRO_SIGNAL_STALL_MS: positiveMs(45_000),
  /** Delivery attempts of one outbound message before it goes to the DLQ. */
  MONIRO_SIGNAL_SEND_ATTEMPTS: z.preprocess(blankIsUnset, z.coerce.number().int().min(1).max(100).default(6)),
  /** First retry delay of a failed send; doubled per attempt, at most 60 s. */
  MONIRO_SIGNAL_RETRY_BASE_MS: positiveMs(1_000),
  /**
   * On SIGTERM, how long a Signal message NATS has not taken yet is still retried, and how long the
   * bridge waits for the rest of an event signal-cli was sending; what is still not relayed then is
   * logged at error level with its event (docs/signal.md).
   */
  MONIRO_SHUTDOWN_GRACE_MS: z.preprocess(blankIsUnset, z.coerce.number().int().min(0).default(5_000)),
});
export type SignalBridgeConfig = z.output<typeof signalBridgeConfigSchema>;

export function loadSignalBridgeConfig(env: Record<string, string | undefined> = process.env): SignalBridgeConfig {
  return parseEnv(signalBridgeConfigSchema, env);
}
