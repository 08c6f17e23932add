import { parseEnv, serviceConfigSchema } from "@moniro/config/service";
import { z } from "zod";

/** The scheduler's environment: the common variables plus its own. */
export const schedulerConfigSchema = serviceConfigSchema.extend({
  /**
   * How often the definitions are read again and reconciled even when no
   * file event arrived (file watching misses changes on some mounts).
   */
  MONIRO_SCHEDULER_RESYNC_MS: z.coerce.number().int().min(1_000).default(30_000),
  /** Firings processed at once per replica (each is one JetStream publish). */
  MONIRO_SCHEDULER_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
});
export type SchedulerConfig = z.output<typeof schedulerConfigSchema>;

export function loadSchedulerConfig(env: Record<string, string | undefined> = process.env): SchedulerConfig {
  return parseEnv(schedulerConfigSchema, env);
}
