import { parseEnv, serviceConfigSchema } from "@moniro/config/service";
import { z } from "zod";

/** An unset or empty variable both mean "not configured". */
const optionalUrl = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z
    .url({ protocol: /^https?$/, error: "must be the http(s) URL of a signal-cli daemon (signal-cli daemon --http)" })
    .optional(),
);

export const signalBridgeConfigSchema = serviceConfigSchema.extend({
  /** signal-cli daemon base URL, e.g. http://127.0.0.1:8080; unset disables Signal. */
  MONIRO_SIGNAL_URL: optionalUrl,
  /** The account (+E.164) to use when the daemon runs in multi-account mode. */
  MONIRO_SIGNAL_ACCOUNT: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z
      .string()
      .regex(/^\+[1-9]\d{4,14}$/, "must be a phone number in E.164 form, e.g. +15551234567")
      .optional(),
  ),
});
export type SignalBridgeConfig = z.output<typeof signalBridgeConfigSchema>;

export function loadSignalBridgeConfig(env: Record<string, string | undefined> = process.env): SignalBridgeConfig {
  return parseEnv(signalBridgeConfigSchema, env);
}
