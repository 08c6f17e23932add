import { z } from "zod";
import { envelopeBase } from "./common.js";

export const dlqIssueSchema = z.object({ path: z.string(), message: z.string() });
export type DlqIssue = z.infer<typeof dlqIssueSchema>;

/** What lands on `moniro.dlq.<origin>`: the rejected bytes, where they came from, and why. */
export const dlqRecordSchema = z.object({
  ...envelopeBase,
  /** Which consumer rejected it: `in`, `out`, `tool`, `ctl`, `sched`, `wf`, or a bridge's name. */
  origin: z.string().min(1),
  /** The subject the envelope arrived on. */
  subject: z.string(),
  /** One line a human can act on. */
  reason: z.string(),
  /** The schema errors, one per offending field. */
  issues: z.array(dlqIssueSchema).default([]),
  /** The rejected payload as received (UTF-8), whole up to 1 MiB and when the record fits the server's max_payload. */
  payload: z.string(),
  /** Present when `payload` was cut: the size of the whole payload in bytes (it cannot be replayed). */
  truncatedFrom: z.number().int().positive().optional(),
});
export type DlqRecord = z.output<typeof dlqRecordSchema>;
export type DlqRecordInput = z.input<typeof dlqRecordSchema>;
