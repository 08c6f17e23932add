import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";

/** JetStream did not store a publish: no stream takes the subject, the server refused it, or no ack came in time. */
export class JetStreamPublishError extends Error {
  override readonly name = "JetStreamPublishError";
}

interface Pending {
  subject: string;
  deadline: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

const decoder = new TextDecoder();

/** The error of a JetStream publish ack (`{"stream":…,"seq":…}` or `{"error":{…}}`), or undefined when stored. */
function ackFailure(msg: Msg, subject: string): string | undefined {
  if (msg.data.length === 0) {
    return msg.headers?.code === 503
      ? `no JetStream stream stores '${subject}' (no responders)`
      : `empty JetStream ack for '${subject}'`;
  }
  try {
    const ack = JSON.parse(decoder.decode(msg.data)) as { stream?: string; error?: { description?: string } };
    if (ack.error) return ack.error.description ?? "JetStream refused the message";
    return typeof ack.stream === "string" && ack.stream !== "" ? undefined : "invalid JetStream ack";
  } catch {
    return "unreadable JetStream ack";
  }
}

/**
 * JetStream publishes whose acks come back on one subscription of this
 * connection (`<inbox>.<n>`), matched by number. It does what
 * `JetStreamClient.publish` does for one message (PUB with a reply subject,
 * wait for the stream's ack, fail on a refusal or after `timeoutMs`) without
 * its per-call garbage: nats.js's request path builds an Error with a stack
 * trace for every request it settles (RequestOne.cancel), a timer and a
 * Promise.race per call; here a publish is one map entry, and one timer
 * sweeps the overdue ones. Same bytes on the wire, same single round trip.
 */
export class JetStreamAcks {
  private readonly prefix: string;
  private readonly pending = new Map<number, Pending>();
  private counter = 0;
  private sweeping: NodeJS.Timeout | undefined;
  /** False once its subscription ended (connection closed, permission refused): make a new one. */
  open = true;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = 5_000,
  ) {
    this.prefix = `${createInbox()}.`;
    const subscription = nc.subscribe(`${this.prefix}*`, {
      callback: (error, msg) => {
        if (!error) return this.settle(msg);
        this.open = false;
        this.failAll(error.message);
      },
    });
    const ended = (reason: string) => {
      this.open = false;
      this.failAll(reason);
    };
    void subscription.closed.then(
      () => ended("the NATS connection closed"),
      (error: unknown) => ended((error as Error)?.message ?? String(error)),
    );
  }

  /** Resolves once the stream stored the message (`Nats-Msg-Id` in `headers` makes a retry a duplicate). */
  publish(subject: string, data: Uint8Array | string, headers: MsgHdrs): Promise<void> {
    const token = ++this.counter;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(token, { subject, deadline: Date.now() + this.timeoutMs, resolve, reject });
      try {
        this.nc.publish(subject, data, { reply: `${this.prefix}${token}`, headers });
      } catch (error) {
        this.pending.delete(token);
        reject(error);
        return;
      }
      if (!this.sweeping) this.sweeping = setTimeout(this.sweep, this.timeoutMs).unref();
    });
  }

  private settle(msg: Msg): void {
    const token = Number(msg.subject.slice(this.prefix.length));
    const entry = this.pending.get(token);
    if (!entry) return; // timed out meanwhile
    this.pending.delete(token);
    const failure = ackFailure(msg, entry.subject);
    if (failure === undefined) entry.resolve();
    else entry.reject(new JetStreamPublishError(failure));
  }

  private readonly sweep = () => {
    this.sweeping = undefined;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [token, entry] of this.pending) {
      if (entry.deadline <= now) {
        this.pending.delete(token);
        entry.reject(new JetStreamPublishError(`no JetStream ack for '${entry.subject}' within ${this.timeoutMs} ms`));
      } else next = Math.min(next, entry.deadline);
    }
    if (next !== Number.POSITIVE_INFINITY) this.sweeping = setTimeout(this.sweep, next - now).unref();
  };

  private failAll(reason: string): void {
    for (const [token, entry] of this.pending) {
      this.pending.delete(token);
      entry.reject(new JetStreamPublishError(`no JetStream ack for '${entry.subject}': ${reason}`));
    }
  }
}
