import { contextSchema, nameSchema, scheduleSpecSchema, tagSchema } from "@moniro/envelopes";
import { z } from "zod";

/** What a BullMQ job carries; read back from Redis through this schema. */
export const fireJobDataSchema = z.discriminatedUnion("kind", [
  /** Made by the agent's `cron` tool (`<ns>.sched.upsert`). */
  z.object({
    kind: z.literal("job"),
    agent: nameSchema,
    job: nameSchema,
    schedule: scheduleSpecSchema,
    reason: z.string(),
  }),
  /** The `schedule` wakeup of the agent's definition. */
  z.object({
    kind: z.literal("wakeup"),
    agent: nameSchema,
    reason: z.string(),
    /** Where it lands when `workspace` names no running instance with the agent as a member (and without one). */
    context: contextSchema,
    /** The definition's `schedule.workspace`: `<workflow>:<tag>`, or `<workflow>` for each of its running instances. */
    workspace: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}(:[a-z0-9][a-z0-9_-]{0,62})?$/)
      .optional(),
  }),
  /** The idle heartbeat of the agent's definition (`schedule.heartbeat_ms`). */
  z.object({
    kind: z.literal("heartbeat"),
    agent: nameSchema,
    everyMs: z.number().int().positive(),
    replyTo: tagSchema,
  }),
]);
export type FireJobData = z.infer<typeof fireJobDataSchema>;

export const HEARTBEAT_TEXT = "health check";
export const HEARTBEAT_JOB = "heartbeat";
export const WAKEUP_JOB = "wakeup";
/** What a definition's wakeup says when its `reason` is left out. */
export const DEFAULT_WAKEUP_REASON = "scheduled wakeup";
/** Where a heartbeat is answered when the definition names no `heartbeat_to`. */
export const DEFAULT_HEARTBEAT_TO = "http:heartbeat";
