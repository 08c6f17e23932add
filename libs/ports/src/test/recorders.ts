import type { EventType, OutboundEnvelope } from "@moniro/envelopes";
import type { EventSink, Outbox, SpanAttributes, SpanHandle, Tracing } from "../events.js";

export interface RecordedEvent {
  agent: string;
  type: EventType;
  data: Record<string, unknown>;
}

/** EventSink fake: keeps every event in order. */
export class RecordingEvents implements EventSink {
  readonly events: RecordedEvent[] = [];

  emit(agent: string, type: EventType, data: Record<string, unknown> = {}): void {
    this.events.push({ agent, type, data: structuredClone(data) });
  }

  ofType(type: EventType): RecordedEvent[] {
    return this.events.filter((event) => event.type === type);
  }

  /** Event types in order, without llm-delta noise unless asked for. */
  types(options: { deltas?: boolean } = {}): EventType[] {
    return this.events.map((event) => event.type).filter((type) => options.deltas || type !== "llm-delta");
  }
}

/** Outbox fake: keeps every envelope sent; `fail` makes the next sends reject. */
export class RecordingOutbox implements Outbox {
  readonly sent: OutboundEnvelope[] = [];
  fail: Error | undefined;

  async send(envelope: OutboundEnvelope): Promise<void> {
    if (this.fail) throw this.fail;
    this.sent.push(structuredClone(envelope));
  }
}

export interface RecordedSpan {
  name: string;
  attributes: SpanAttributes;
  error?: unknown;
}

/** Tracing fake: records each span when it ends, with the attributes set while it ran. */
export class RecordingTracing implements Tracing {
  readonly spans: RecordedSpan[] = [];

  async span<T>(name: string, attributes: SpanAttributes, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
    const recorded: SpanAttributes = { ...attributes };
    const handle: SpanHandle = { setAttributes: (more) => Object.assign(recorded, more) };
    try {
      const result = await fn(handle);
      this.spans.push({ name, attributes: recorded });
      return result;
    } catch (error) {
      this.spans.push({ name, attributes: recorded, error });
      throw error;
    }
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name === name);
  }
}
