import { Socket } from "node:net";
import type { SpanAttributes, SpanHandle, Tracing } from "@moniro/ports";
import type { RedisClient } from "@moniro/store";
import type { NatsConnection } from "@nats-io/transport-node";

/**
 * Counts the commands a Redis client sends (pipelined ones and scripts
 * included: ioredis sends each through `sendCommand`), to explain a figure
 * ("how many round trips does one step cost").
 */
export function countRedisCommands(redis: RedisClient): { count(): number; byName(): Map<string, number> } {
  let total = 0;
  const names = new Map<string, number>();
  const original = redis.sendCommand.bind(redis);
  (redis as { sendCommand: unknown }).sendCommand = (command: { name: string }, ...rest: unknown[]) => {
    total++;
    names.set(command.name, (names.get(command.name) ?? 0) + 1);
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  };
  return { count: () => total, byName: () => new Map(names) };
}

/**
 * Counts the socket writes of this process by remote port (each one a write
 * system call): how well a process batches what it sends. Patches
 * `net.Socket.prototype.write`, so call it once, in a process of its own.
 */
export function countSocketWrites(): { byPort(): Record<string, number> } {
  const counts: Record<string, number> = {};
  const original = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
    const port = String(this.remotePort ?? "local");
    counts[port] = (counts[port] ?? 0) + 1;
    return (original as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof original;
  return { byPort: () => ({ ...counts }) };
}

/** Messages a NATS connection sent so far. */
export function natsMessagesOut(nc: NatsConnection): number {
  return nc.stats().outMsgs;
}

const noopSpan: SpanHandle = { setAttributes: () => {} };

/** A Tracing port that times spans by name (first word and the tool name), for step breakdowns. */
export class SpanTimer implements Tracing {
  readonly durations = new Map<string, number[]>();
  /** When the last span of each name began (performance.now()). */
  readonly lastStart = new Map<string, number>();
  enabled = true;

  async span<T>(name: string, _attributes: SpanAttributes, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
    if (!this.enabled) return fn(noopSpan);
    const t0 = performance.now();
    this.lastStart.set(name.split(" ")[0] ?? name, t0);
    try {
      return await fn(noopSpan);
    } finally {
      const key = name.split(" ")[0] ?? name;
      const list = this.durations.get(key) ?? [];
      list.push(performance.now() - t0);
      this.durations.set(key, list);
    }
  }

  reset(): void {
    this.durations.clear();
  }
}
