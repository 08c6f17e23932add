import type { AgentRegistry } from "@moniro/registry";
import { HttpError } from "../http/http-error.js";

/**
 * The agent registry once the gateway's NATS connection (made in the
 * background) has opened it and the agents directory has been synced into
 * it. Until then a request waits up to `waitMs`, then gets a 503.
 */
export class RegistryLink {
  private registry: AgentRegistry | undefined;
  private waiters: Array<(registry: AgentRegistry) => void> = [];
  /** Why the registry will never open (NATS setup failed for good), once known. */
  private failure: string | undefined;

  constructor(private readonly waitMs = 3_000) {}

  /** NATS setup failed and is not retried: every request is answered at once with the reason. */
  fail(error: unknown): void {
    this.failure = `NATS setup failed and is not retried: ${(error as Error)?.message ?? String(error)}`;
  }

  set(registry: AgentRegistry): void {
    this.registry = registry;
    for (const wake of this.waiters.splice(0)) wake(registry);
  }

  current(): AgentRegistry | undefined {
    return this.registry;
  }

  /** The registry, or a 503 `nats_unavailable` when it is not open within `waitMs`. */
  async get(): Promise<AgentRegistry> {
    if (this.registry) return this.registry;
    if (this.failure) {
      throw new HttpError(
        503,
        "nats_unavailable",
        `the request was not accepted: the agent registry (NATS KV) cannot be opened: ${this.failure}; fix it and restart the gateway`,
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== done);
        reject(
          new HttpError(
            503,
            "nats_unavailable",
            "the request was not accepted: the agent registry (NATS KV) is not reachable yet (the gateway is still connecting to NATS); retry shortly",
            { "Retry-After": "2" },
          ),
        );
      }, this.waitMs);
      const done = (registry: AgentRegistry) => {
        clearTimeout(timer);
        resolve(registry);
      };
      this.waiters.push(done);
    });
  }

  /** For /readyz: throws until the registry is open. */
  check(): void {
    if (!this.registry) throw new Error("agent registry not open yet (waiting for NATS)");
  }
}
