import { Queue } from "bullmq/dist/cjs/classes/queue.js";
import { Worker } from "bullmq/dist/cjs/classes/worker.js";
import { Redis } from "ioredis";
import { sharedStack, stopOnSigterm } from "./shared-stack.js";

// The scheduler's beyond the shared stack: a BullMQ queue and its worker (the classes from their
// own files, as the scheduler takes them), on ioredis, under a prefix of this process's own.
const stack = await sharedStack("scheduler");
const connection = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
const prefix = `${process.env.FLOOR_PREFIX ?? "rss-floor"}-${process.pid}`;
const queue = new Queue("wakeups", { connection, prefix });
const worker = new Worker("wakeups", async () => {}, { connection, prefix });
await queue.waitUntilReady();
await worker.waitUntilReady();
stopOnSigterm(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  await stack.nc.close();
});
stack.ready();
