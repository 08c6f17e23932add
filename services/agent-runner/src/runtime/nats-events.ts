import { type Bus, isInboundOnlyChannel } from "@moniro/bus";
import type { EventType, OutboundEnvelope, Subjects } from "@moniro/envelopes";
import { channelOf, stamp } from "@moniro/envelopes";
import type { Clock, EventSink, Outbox } from "@moniro/ports";
import { systemClock } from "@moniro/ports";

/**
 * EventSink over core NATS (`moniro.evt.<agent>.<type>`): fire and forget,
 * never throws into the loop; the bus adds the active span's trace headers.
 * Given `publishLater`, a tick's events leave in one socket write (issue 17).
 */
export class NatsEventSink implements EventSink {
  private readonly clock: Clock;
  private readonly onError: (error: unknown) => void;

  constructor(
    private readonly bus: Pick<Bus, "publish"> & Partial<Pick<Bus, "publishLater">>,
    private readonly subjects: Subjects,
    options: { clock?: Clock; onError?: (error: unknown) => void } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.onError = options.onError ?? (() => {});
  }

  emit(agent: string, type: EventType, data: Record<string, unknown> = {}): void {
    try {
      const { v, id, ts } = stamp(this.clock.now());
      // A literal of one shape, not a spread: cheaper to build and to stringify (issue 17: ~9 events per DM).
      const event = { v, id, ts, agent, type, data };
      if (this.bus.publishLater) this.bus.publishLater(this.subjects.evt(agent, type), event);
      else this.bus.publish(this.subjects.evt(agent, type), event);
    } catch (error) {
      this.onError(error);
    }
  }
}

/** The sink, also telling `onSkip` of each heartbeat the loop dropped (`cycle-skipped` with `heartbeat: true`). */
export function countHeartbeatSkips(sink: EventSink, onSkip: ((agent: string) => void) | undefined): EventSink {
  if (!onSkip) return sink;
  return {
    emit(agent, type, data = {}) {
      if (type === "cycle-skipped" && data.heartbeat === true) onSkip(agent);
      sink.emit(agent, type, data);
    },
  };
}

/** Outbox over JetStream (`moniro.out.<channel>`, the channel being the first token of `to`), with trace headers. */
export class NatsOutbox implements Outbox {
  constructor(
    private readonly bus: Pick<Bus, "publishDurable">,
    private readonly subjects: Subjects,
  ) {}

  async send(envelope: OutboundEnvelope): Promise<void> {
    const channel = channelOf(envelope.to);
    // A failure report to a `cron:` (or other inbound-only) source reaches nobody:
    // it stays in the thread and the error event instead of piling up in MONIRO_OUT.
    if (isInboundOnlyChannel(channel)) return;
    await this.bus.publishDurable(this.subjects.out(channel), envelope);
  }
}
