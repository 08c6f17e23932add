/** A bus operation failed; `subject` says where. */
export class BusError extends Error {
  override name = "BusError";
  constructor(
    message: string,
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Nobody subscribes to the request's subject (NATS answered 503 at once). */
export class NoRespondersError extends BusError {
  override name = "NoRespondersError";
  constructor(subject: string, options?: { cause?: unknown }) {
    super(
      `no responders on ${subject}: nothing subscribes to it right now (is the service running?)`,
      subject,
      options,
    );
  }
}

/** The server's permissions refuse this connection's user a publish on the subject: nothing was delivered. */
export class PublishRefusedError extends BusError {
  override name = "PublishRefusedError";
  constructor(subject: string, options?: { cause?: unknown }) {
    super(
      `NATS refused the publish to ${subject}: this service's NATS user has no publish permission for it (grant it in the server's authorization; docs/deployment.md, "Logins and secrets")`,
      subject,
      options,
    );
  }
}

/** A responder exists (or existed) but gave no reply in time. */
export class RequestTimeoutError extends BusError {
  override name = "RequestTimeoutError";
  constructor(
    subject: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(`no reply on ${subject} within ${timeoutMs} ms`, subject, options);
  }
}

/** The responder went silent: no reply and no keepalive for `idleMs` (it died or was cut off). */
export class ResponderLostError extends BusError {
  override name = "ResponderLostError";
  constructor(
    subject: string,
    readonly idleMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      `the responder on ${subject} went silent: no reply and no keepalive for ${idleMs} ms (it died or was cut off)`,
      subject,
      options,
    );
  }
}

/** The connection is closed or draining: nothing can be sent any more. */
export class BusClosedError extends BusError {
  override name = "BusClosedError";
  constructor(subject: string, options?: { cause?: unknown }) {
    super(`cannot use ${subject}: the NATS connection is closed or draining`, subject, options);
  }
}

/** Whether nats.js refused to send a message for being larger than the server's `max_payload`. */
export function exceedsMaxPayload(error: unknown): boolean {
  return /max_payload/.test((error as Error)?.message ?? "");
}

/** The message is larger than the NATS server takes in one message (its `max_payload`): nothing was sent. */
export class PayloadTooLargeError extends BusError {
  override name = "PayloadTooLargeError";
  constructor(
    subject: string,
    readonly bytes: number,
    readonly maxPayload: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      `cannot send ${bytes} bytes on ${subject}: the NATS server takes at most ${maxPayload ?? "its max_payload"} bytes in one message`,
      subject,
      options,
    );
  }
}

export type RequestFailure = "no-responders" | "lost" | "timeout" | "closed" | "other";

/** Tells the reasons a NATS request failed apart (our typed errors, or nats.js v3 errors matched by name). */
export function requestFailure(error: unknown): RequestFailure {
  if (error instanceof NoRespondersError) return "no-responders";
  if (error instanceof ResponderLostError) return "lost";
  if (error instanceof RequestTimeoutError) return "timeout";
  if (error instanceof BusClosedError) return "closed";
  const chain: unknown[] = [];
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  const names = chain.map((item) => `${(item as Error)?.name ?? ""} ${(item as { code?: unknown })?.code ?? ""}`);
  const isNoResponders = chain.some(
    (item) =>
      typeof (item as { isNoResponders?: unknown })?.isNoResponders === "function" &&
      (item as { isNoResponders: () => boolean }).isNoResponders(),
  );
  if (isNoResponders || names.some((name) => /NoResponders|no_responders|503/i.test(name))) return "no-responders";
  if (names.some((name) => /Timeout/i.test(name))) return "timeout";
  if (names.some((name) => /Closed|Draining/i.test(name))) return "closed";
  return "other";
}

/** A JetStream publish was not confirmed: no stream takes the subject, the stream refused it, or no ack came in time. */
export class JetStreamPublishError extends BusError {
  override name = "JetStreamPublishError";
  constructor(subject: string, message: string, options?: { cause?: unknown }) {
    super(message, subject, options);
  }
}
