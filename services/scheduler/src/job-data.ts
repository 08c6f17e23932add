import { nameSchema, scheduleSpecSchema } from "@moniro/envelopes";
import { z } from "zod";

/** What a BullMQ job carries; read back from Redis through this schema. */
export const fireJobDataSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("job"),
    agent: nameSchema,
    job: nameSchema,
    schedule: scheduleSpecSchema,
    reason: z.string(),
  }),
  z.object({ kind: z.literal("heartbeat"), agent: nameSchema, everyMs: z.number().int().positive() }),
]);
export type FireJobData = z.infer<typeof fireJobDataSchema>;

export const HEARTBEAT_TEXT = "health check";
export const HEARTBEAT_JOB = "heartbeat";
