import { request } from "node:http";
import express from "express";
import { Redis } from "ioredis";
import { sharedStack, stopOnSigterm } from "./shared-stack.js";

// The gateway's beyond the shared stack: express (one JSON route, answered once) and ioredis.
const stack = await sharedStack("gateway");
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
await redis.ping();
const app = express();
app.use(express.json());
app.post("/v1/agents/:agent/messages", (request, response) => {
  response.status(202).json({ agent: request.params.agent });
});
const server = app.listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const address = server.address();
const port = typeof address === "object" && address ? address.port : 0;
await new Promise((resolve, reject) => {
  const post = request(
    {
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/v1/agents/floor/messages",
      headers: { "content-type": "application/json" },
    },
    (response) => response.resume().on("end", resolve),
  );
  post.on("error", reject);
  post.end(JSON.stringify({ text: "hello" }));
});
stopOnSigterm(async () => {
  server.close();
  redis.disconnect();
  await stack.nc.close();
});
stack.ready();
