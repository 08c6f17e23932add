import { DEFAULT_STREAM_LIMITS, type StreamLimitSettings } from "@moniro/bus";
import { z } from "zod";

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);
// JetStream refuses a max age under its duplicate window's floor of 100 ms; a second is the useful floor.
const ageMs = (fallback: number) => z.coerce.number().int().min(1_000).default(fallback);
const bytes = (fallback: number) => z.coerce.number().int().min(1024).default(fallback);

/**
 * The limits of MONIRO_OUT and MONIRO_DLQ. The gateway applies them at start
 * (and updates existing streams that differ); the other services only create
 * a missing stream, with the defaults.
 */
export const streamLimitsEnv = {
  MONIRO_OUT_MAX_AGE_MS: ageMs(DEFAULT_STREAM_LIMITS.out.maxAgeMs),
  MONIRO_OUT_MAX_MSGS: count(DEFAULT_STREAM_LIMITS.out.maxMessages),
  MONIRO_OUT_MAX_BYTES: bytes(DEFAULT_STREAM_LIMITS.out.maxBytes),
  MONIRO_DLQ_MAX_AGE_MS: ageMs(DEFAULT_STREAM_LIMITS.dlq.maxAgeMs),
  MONIRO_DLQ_MAX_MSGS: count(DEFAULT_STREAM_LIMITS.dlq.maxMessages),
  MONIRO_DLQ_MAX_BYTES: bytes(DEFAULT_STREAM_LIMITS.dlq.maxBytes),
};

type StreamLimitsConfig = { [K in keyof typeof streamLimitsEnv]: number };

export function streamLimitsOf(config: StreamLimitsConfig): StreamLimitSettings {
  return {
    out: {
      maxAgeMs: config.MONIRO_OUT_MAX_AGE_MS,
      maxMessages: config.MONIRO_OUT_MAX_MSGS,
      maxBytes: config.MONIRO_OUT_MAX_BYTES,
    },
    dlq: {
      maxAgeMs: config.MONIRO_DLQ_MAX_AGE_MS,
      maxMessages: config.MONIRO_DLQ_MAX_MSGS,
      maxBytes: config.MONIRO_DLQ_MAX_BYTES,
    },
  };
}
