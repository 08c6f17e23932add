import Anthropic from "@anthropic-ai/sdk";
import { Redis } from "ioredis";
import { sharedStack, stopOnSigterm } from "./shared-stack.js";

// The runner's libraries beyond the shared stack: ioredis (inboxes, threads) and the Anthropic SDK.
const stack = await sharedStack("agent-runner");
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
await redis.ping();
const client = new Anthropic({ apiKey: "rss-floor", baseURL: "http://127.0.0.1:9" });
stopOnSigterm(async () => {
  redis.disconnect();
  await stack.nc.close();
});
stack.ready({ llm: client.baseURL });
