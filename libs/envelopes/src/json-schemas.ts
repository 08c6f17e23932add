import { z } from "zod";
import { controlEnvelopeSchema, controlReplySchema } from "./control.js";
import { dlqRecordSchema } from "./dlq.js";
import { eventEnvelopeSchema } from "./event.js";
import { inboundEnvelopeSchema } from "./inbound.js";
import { outboundEnvelopeSchema } from "./outbound.js";
import { schedulerReplySchema, schedulerRequestSchema } from "./scheduler.js";
import { subagentMetaSchema } from "./subagent.js";
import { toolCallEnvelopeSchema, toolCancelEnvelopeSchema, toolResultEnvelopeSchema } from "./tool.js";

/** The public envelopes, by file name under docs/schemas/. Input shapes: what a producer must send. */
export const PUBLIC_SCHEMAS: Record<string, z.ZodType> = {
  "inbound.schema.json": inboundEnvelopeSchema,
  "outbound.schema.json": outboundEnvelopeSchema,
  "tool-call.schema.json": toolCallEnvelopeSchema,
  "tool-result.schema.json": toolResultEnvelopeSchema,
  "tool-cancel.schema.json": toolCancelEnvelopeSchema,
  "event.schema.json": eventEnvelopeSchema,
  "control.schema.json": controlEnvelopeSchema,
  "control-reply.schema.json": controlReplySchema,
  "scheduler-request.schema.json": schedulerRequestSchema,
  "scheduler-reply.schema.json": schedulerReplySchema,
  "dlq-record.schema.json": dlqRecordSchema,
  /** `meta.subagent` of an inbound envelope on the internal channel (docs/subagents.md). */
  "subagent-meta.schema.json": subagentMetaSchema,
};

export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, schema] of Object.entries(PUBLIC_SCHEMAS)) {
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
    out[file] = `${JSON.stringify({ $id: `https://moniro.dev/schemas/v1/${file}`, ...json }, null, 2)}\n`;
  }
  return out;
}
