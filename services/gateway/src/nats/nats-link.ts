import type { Bus } from "@moniro/bus";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

/** The NATS side once connected; absent while the gateway is still connecting. */
export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  bus: Bus;
}

/** NATS is not connected (yet): requests that need it answer 503 instead of waiting. */
export class NatsNotConnectedError extends Error {
  override readonly name = "NatsNotConnectedError";
  constructor(reason?: string) {
    super(reason ?? "not connected to NATS yet (the gateway keeps retrying; see /readyz)");
  }
}

/** A late-bound NATS connection: adapters ask for it per call. */
export class NatsLink {
  private handles: NatsHandles | undefined;
  private failure: string | undefined;

  set(handles: NatsHandles): void {
    this.handles = handles;
  }

  /** Connecting gave up for good (a config error, refused credentials): every use and /readyz say why. */
  fail(error: unknown): void {
    this.failure = `NATS setup failed and is not retried: ${(error as Error)?.message ?? String(error)}`;
  }

  get(): NatsHandles {
    if (this.failure) throw new NatsNotConnectedError(this.failure);
    if (!this.handles || this.handles.nc.isClosed()) throw new NatsNotConnectedError();
    return this.handles;
  }

  /** Readiness: connected, and the server answers a round trip. */
  async check(): Promise<void> {
    await this.get().nc.flush();
  }

  async close(): Promise<void> {
    const handles = this.handles;
    this.handles = undefined;
    if (handles && !handles.nc.isClosed()) await handles.nc.drain().catch(() => undefined);
  }
}
