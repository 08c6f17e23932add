import type { JetStreamManager } from "@nats-io/jetstream";

/** How many consumers the stream has now. */
export async function consumerCount(jsm: JetStreamManager, stream: string): Promise<number> {
  let count = 0;
  for await (const _ of jsm.consumers.list(stream)) count++;
  return count;
}

/** The stream's consumer count once it is `expected`, or the last count after `timeoutMs`. */
export async function consumerCountSettled(
  jsm: JetStreamManager,
  stream: string,
  expected: number,
  timeoutMs = 5_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = await consumerCount(jsm, stream);
    if (count === expected || Date.now() > deadline) return count;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
