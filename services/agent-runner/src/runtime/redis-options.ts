/**
 * ioredis options of the runner's connection. Auto-pipelining sends the
 * commands issued in one tick as one write: a step's assistant message and
 * the checkpoint's inbox read taken ahead (loop/inbox-ahead.ts), an ack and
 * the state note after an injection. Order on the
 * connection is kept (the loop relies on it: an ack after its thread write).
 */
export const RUNNER_REDIS_OPTIONS = { enableAutoPipelining: true } as const;
