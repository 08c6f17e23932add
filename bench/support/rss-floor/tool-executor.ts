import { spawn } from "node:child_process";
import { Redis } from "ioredis";
import { sharedStack, stopOnSigterm } from "./shared-stack.js";

// The executor's beyond the shared stack: ioredis and a child process (what its tools run).
const stack = await sharedStack("tool-executor");
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
await redis.ping();
await new Promise((resolve, reject) => spawn("/bin/true").on("exit", resolve).on("error", reject));
stopOnSigterm(async () => {
  redis.disconnect();
  await stack.nc.close();
});
stack.ready();
