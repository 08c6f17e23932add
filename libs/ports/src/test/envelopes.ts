import type { InboundEnvelope, Lane } from "@moniro/envelopes";
import { defaultPriority } from "@moniro/envelopes";
import type { Ids } from "../ids.js";
import { sequentialIds } from "./ids.js";

const defaultIds = sequentialIds(500_000);

/** A valid inbound envelope with sensible defaults, for tests. */
export function inbound(
  fields: Partial<Omit<InboundEnvelope, "priority">> & { text: string; priority?: Lane },
  options: { ids?: Ids; now?: number } = {},
): InboundEnvelope {
  const source = fields.source ?? "http:alice";
  const now = options.now ?? Date.UTC(2025, 0, 1);
  return {
    v: 1,
    id: fields.id ?? (options.ids ?? defaultIds).newId(),
    ts: fields.ts ?? new Date(now).toISOString(),
    agent: fields.agent ?? "ada",
    source,
    context: fields.context ?? "personal",
    priority: fields.priority ?? defaultPriority(source, fields.context ?? "personal"),
    replyTo: fields.replyTo ?? source,
    text: fields.text,
    attachments: fields.attachments ?? [],
    meta: fields.meta ?? {},
  };
}
