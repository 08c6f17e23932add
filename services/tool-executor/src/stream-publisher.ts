import { traceHeaders } from "@moniro/bus";
import { createInbox, type Msg, type NatsConnection } from "@nats-io/transport-node";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The longest wait for the stream's acknowledgement (nats.js's JetStream default). */
const ACK_TIMEOUT_MS = 5_000;

/** A JetStream publish the stream refused or did not acknowledge; the message may not be stored. */
export class StreamPublishError extends Error {
  override readonly name = "StreamPublishError";
}

type Waiter = (msg: Msg | undefined, error?: Error) => void;

/**
 * JetStream publish of an envelope (JSON, trace headers, `Nats-Msg-Id` = its
 * `id`) that resolves once the stream stored it, as `publishEnvelope` does,
 * with the acknowledgements of all publishes arriving on one wildcard inbox
 * subscription. Why not `js.publish`: nats.js builds an Error (a stack
 * capture) for every request it completes, even a successful one (its
 * RequestOne.cancel), which was the largest single JavaScript cost of a
 * `message` call on the executor. The wire traffic is the same: one publish,
 * one acknowledgement.
 */
export function streamPublisher(nc: NatsConnection): (subject: string, envelope: unknown) => Promise<void> {
  let inbox: { prefix: string; next: number; pending: Map<string, Waiter> } | undefined;

  function open() {
    if (inbox) return inbox;
    const opened = { prefix: createInbox(), next: 0, pending: new Map<string, Waiter>() };
    nc.subscribe(`${opened.prefix}.*`, {
      callback: (error, msg) => {
        if (error) {
          for (const waiter of [...opened.pending.values()]) waiter(undefined, error);
          return;
        }
        opened.pending.get(msg.subject.slice(opened.prefix.length + 1))?.(msg);
      },
    });
    inbox = opened;
    return opened;
  }

  return (subject, envelope) =>
    new Promise<void>((resolve, reject) => {
      const { prefix, pending } = open();
      const token = String(inbox ? inbox.next++ : 0);
      const timer = setTimeout(
        () =>
          settle(
            undefined,
            new StreamPublishError(`no acknowledgement from JetStream for ${subject} within ${ACK_TIMEOUT_MS} ms`),
          ),
        ACK_TIMEOUT_MS,
      );
      const settle: Waiter = (msg, error) => {
        clearTimeout(timer);
        pending.delete(token);
        if (error) return reject(error);
        const problem = msg ? ackProblem(msg, subject) : undefined;
        if (problem) reject(new StreamPublishError(problem));
        else resolve();
      };
      pending.set(token, settle);
      const id = (envelope as { id?: unknown })?.id;
      const headers = traceHeaders();
      if (typeof id === "string") headers.set("Nats-Msg-Id", id);
      try {
        nc.publish(subject, encoder.encode(JSON.stringify(envelope)), { reply: `${prefix}.${token}`, headers });
      } catch (error) {
        settle(undefined, error as Error);
      }
    });
}

/** Why the acknowledgement says the message was not stored, or undefined when it was. */
function ackProblem(msg: Msg, subject: string): string | undefined {
  if (msg.headers?.code === 503) return `no JetStream stream stores ${subject}`;
  let ack: { stream?: unknown; error?: { description?: unknown; code?: unknown } };
  try {
    ack = JSON.parse(decoder.decode(msg.data));
  } catch {
    return `JetStream answered a publish to ${subject} with something that is not an acknowledgement`;
  }
  if (ack.error)
    return `JetStream refused the publish to ${subject}: ${String(ack.error.description ?? ack.error.code)}`;
  if (typeof ack.stream !== "string" || ack.stream === "")
    return `JetStream's acknowledgement for ${subject} names no stream`;
  return undefined;
}
