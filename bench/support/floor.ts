import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { randomToken } from "./random.js";
import { now, type Summary, summarize } from "./stats.js";

const NATS_URL = process.env.MONIRO_NATS_URL ?? "nats://127.0.0.1:4222";
const REDIS_URL = process.env.MONIRO_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface FloorSummary {
  natsRequest: Summary;
  redisRoundTrip: Summary;
  step: Summary;
}

export interface Floor {
  /** Times `iterations` more floor steps (call it between the loop's measurements, so both see the same load). */
  sample(iterations: number): Promise<void>;
  summary(): FloorSummary;
  close(): Promise<void>;
}

/**
 * The floor a loop step cannot beat: one NATS request/reply (the tool call)
 * plus two Redis round trips (persist the assistant message and the result).
 */
export async function startFloor(): Promise<Floor> {
  // Connected like the runner (connectNats of @moniro/bus): no stack captured per request.
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  const responder = await connect({ servers: NATS_URL });
  const redis = new Redis(REDIS_URL);
  const subject = `${randomToken("bench")}.floor`;
  const key = `${randomToken("bench")}:floor`;
  responder.subscribe(subject, {
    callback: (_error, msg) => {
      msg.respond(msg.data);
    },
  });
  await responder.flush();
  const payload = new TextEncoder().encode(JSON.stringify({ callId: "x", content: "ok" }));
  const nats: number[] = [];
  const red: number[] = [];
  const step: number[] = [];
  for (let i = 0; i < 200; i++) await nc.request(subject, payload, { timeout: 2000 });
  return {
    async sample(iterations) {
      for (let i = 0; i < iterations; i++) {
        const t0 = now();
        await nc.request(subject, payload, { timeout: 2000 });
        const t1 = now();
        await redis.xadd(key, "MAXLEN", "~", "1000", "*", "e", "x");
        const t2 = now();
        await redis.xadd(key, "MAXLEN", "~", "1000", "*", "e", "y");
        const t3 = now();
        nats.push(t1 - t0);
        red.push(t2 - t1, t3 - t2);
        step.push(t3 - t0);
      }
    },
    summary: () => ({ natsRequest: summarize(nats), redisRoundTrip: summarize(red), step: summarize(step) }),
    async close() {
      await redis.del(key);
      redis.disconnect();
      await nc.close();
      await responder.close();
    },
  };
}

/** The floor timed in one block. */
export async function measureFloor(iterations = 2000): Promise<FloorSummary> {
  const floor = await startFloor();
  try {
    await floor.sample(iterations);
    return floor.summary();
  } finally {
    await floor.close();
  }
}
