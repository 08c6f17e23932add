import type { Bus } from "@moniro/bus";
import {
  type InboundEnvelopeInput,
  inboundEnvelopeSchema,
  type SubagentMeta,
  type Subjects,
  stamp,
  validate,
} from "@moniro/envelopes";

/**
 * The internal channel (DESIGN §2): a message between a parent and its child
 * is an inbound envelope on the target's `<ns>.in.<agent>`, with
 * `source: agent:<sender>` and `meta.subagent`. It goes through JetStream
 * like any other input, so it reaches the target's own inbox whether or not
 * the target runs anywhere: one queue, two producers.
 */
export class InternalChannel {
  constructor(
    private readonly bus: Pick<Bus, "publishDurable">,
    private readonly subjects: Subjects,
  ) {}

  /** Sends `text` from `from` to `to`; `id` (a ULID) makes a re-send after a crash the same envelope. */
  async send(options: {
    from: string;
    to: string;
    text: string;
    meta: SubagentMeta;
    id?: string;
    now?: number;
    /** The target's context (default: personal). */
    context?: string | undefined;
  }): Promise<string> {
    const stamped = stamp(options.now);
    const input: InboundEnvelopeInput = {
      ...stamped,
      ...(options.id ? { id: options.id } : {}),
      agent: options.to,
      ...(options.context ? { context: options.context } : {}),
      source: `agent:${options.from}`,
      replyTo: `agent:${options.from}`,
      text: options.text,
      meta: { subagent: options.meta },
    };
    const envelope = validate(inboundEnvelopeSchema, input, "internal-channel envelope");
    if (!envelope.ok) throw envelope.error;
    await this.bus.publishDurable(this.subjects.in(options.to), envelope.value);
    return envelope.value.id;
  }
}
