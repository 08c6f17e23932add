import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { Agent, request } from "node:http";
import { ms, report } from "./support/report.js";
import { serviceMain, startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

const WARMUP = 300;
const ITERATIONS = 2_000;
const SECRET = "bench-webhook-secret-0123456789";

/** A GitHub `push` delivery of about 1.5 kB, the kind a busy repository sends. */
const PAYLOAD = JSON.stringify({
  ref: "refs/heads/main",
  before: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
  after: "0000000000000000000000000000000000000000",
  repository: { id: 186853002, name: "moniro", full_name: "example/moniro", private: false },
  pusher: { name: "octocat", email: "octocat@example.com" },
  sender: { login: "octocat", id: 1, type: "User" },
  commits: Array.from({ length: 4 }, (_, index) => ({
    id: `${index}`.repeat(40),
    message: `Commit ${index}: make the deploy less flaky`,
    timestamp: "2026-11-26T00:00:00Z",
    author: { name: "Octo Cat", email: "octocat@example.com", username: "octocat" },
    added: [],
    removed: [],
    modified: [`src/file-${index}.ts`],
  })),
});

const AGENT_YAML = `name: ops
model: claude-bench
backend: anthropic
webhooks:
  github:
    auth: github
    secret_env: BENCH_GITHUB_SECRET
    template: "{{ $event }} to {{ repository.full_name }} by {{ pusher.name }}: {{ commits[0].message }}"
`;

/** One POST on a kept-alive connection → (status, ms until the whole answer arrived). */
function post(agent: Agent, port: number, path: string, body: string, headers: Record<string, string>) {
  return new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        agent,
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { ...headers, "content-length": Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Issue 16: webhook POST → 202 against a running gateway process (real NATS,
 * JetStream storing every delivery before the 202), one delivery at a time on
 * a kept-alive connection, each with its own delivery id and a valid GitHub
 * signature; the DM route's POST → 202 beside it for comparison.
 */
export async function run(): Promise<void> {
  if (!existsSync(serviceMain("gateway"))) throw new Error("build the gateway first (tsc --build)");
  const stack = await startServiceStack({ agents: { ops: AGENT_YAML }, env: { BENCH_GITHUB_SECRET: SECRET } });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const gateway = await stack.start("gateway");
    const signature = `sha256=${createHmac("sha256", SECRET).update(PAYLOAD).digest("hex")}`;
    const hookHeaders = (index: number) => ({
      "content-type": "application/json",
      "x-github-event": "push",
      "x-github-delivery": `bench-delivery-${index}`,
      "x-hub-signature-256": signature,
    });
    const hook: number[] = [];
    const dm: number[] = [];
    const dmBody = JSON.stringify({ text: "deploy finished", from: "bench" });
    for (let index = 0; index < WARMUP + ITERATIONS; index++) {
      const delivery = await post(agent, gateway.port, "/v1/hooks/github", PAYLOAD, hookHeaders(index));
      if (delivery.status !== 202) throw new Error(`webhook answered ${delivery.status}, not 202`);
      const message = await post(agent, gateway.port, "/v1/agents/ops/messages", dmBody, {
        "content-type": "application/json",
      });
      if (message.status !== 202) throw new Error(`DM answered ${message.status}, not 202`);
      if (index < WARMUP) continue;
      hook.push(delivery.ms);
      dm.push(message.ms);
    }
    const repeated: number[] = [];
    for (let index = 0; index < 500; index++) {
      const delivery = await post(agent, gateway.port, "/v1/hooks/github", PAYLOAD, hookHeaders(index % 50));
      if (delivery.status !== 202) throw new Error(`repeated webhook answered ${delivery.status}, not 202`);
      repeated.push(delivery.ms);
    }
    const h = summarize(hook);
    const d = summarize(dm);
    const r = summarize(repeated);
    report({
      benchmark: "webhook",
      title: "Webhook POST → 202 (gateway process, JetStream-stored before the answer)",
      rows: [
        { metric: "webhook POST → 202, p50", value: ms(h.p50), goal: "≤ 2 ms", met: h.p50 <= 2 },
        { metric: "webhook POST → 202, p99", value: ms(h.p99) },
        { metric: "repeated delivery id → 202, p50", value: ms(r.p50) },
        { metric: "DM POST → 202, p50 (for comparison)", value: ms(d.p50) },
        { metric: "DM POST → 202, p99", value: ms(d.p99) },
      ],
      notes: [
        `${h.n} deliveries of a ${PAYLOAD.length}-byte signed GitHub push (HMAC-SHA256 checked, template rendered), after ${WARMUP} unmeasured; one at a time, kept-alive connection`,
      ],
    });
  } finally {
    agent.destroy();
    await stack.stop();
  }
}
