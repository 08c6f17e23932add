import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSubjects } from "@moniro/envelopes";
import { RedisWorkspaceStore } from "@moniro/store";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { NATS_URL, REDIS_URL } from "./support/bench-runner.js";
import { httpPoster } from "./support/http-post.js";
import { cpuMs } from "./support/proc.js";
import { ms, report } from "./support/report.js";
import { startServiceStack } from "./support/service-stack.js";
import { summarize } from "./support/stats.js";

const MEMBERS = 10;
const RATE_PER_S = 1_000;
const SECONDS = 5;
const WARMUP_POSTS = 200;
const CONNECTIONS = 32;

const agentYaml = (name: string) => `name: ${name}\nmodel: bench-model\nbackend: mock\n`;

/**
 * Issue 14: 1,000 channel posts/s into one workspace of 10 members through
 * the real path: `POST /v1/workflows/bench/instances/main/channel` to a
 * gateway process (the HTTP channel route: validate, membership of the
 * mentions, the post stored in the Redis channel, each @mention into the
 * member's inbox, an immediate input published to MONIRO_IN and acked, then
 * 201). Each post mentions one member, in turn. No runner consumes MONIRO_IN
 * (a work queue), so afterwards every input is still there to count: every
 * post must be in the channel, every mention in its member's Redis inbox and
 * in MONIRO_IN on `<ns>.in.<member>`.
 */
export async function run(): Promise<void> {
  const members = Array.from({ length: MEMBERS }, (_, i) => `m${i}`);
  const stack = await startServiceStack({
    agents: Object.fromEntries(members.map((name) => [name, agentYaml(name)])),
    env: {},
  });
  const redis = new Redis(REDIS_URL);
  /** Keep-alive connections, at most CONNECTIONS of them (a browser-like client pool). */
  const poster = httpPoster({ maxSockets: CONNECTIONS });
  const nc = await connect({ servers: NATS_URL });
  try {
    mkdirSync(join(stack.dir, ".workflows"), { recursive: true });
    const yaml = `agents:\n${members.map((name) => `  ${name}: { ref: ${name} }`).join("\n")}\n`;
    writeFileSync(join(stack.dir, ".workflows", "bench.yaml"), yaml);
    const gateway = await stack.start("gateway");
    const base = `http://127.0.0.1:${gateway.port}/v1/workflows/bench/instances`;
    const started = await fetch(base, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tag: "main" }),
    });
    if (started.status !== 201) throw new Error(`start: ${started.status} ${await started.text()}`);
    await started.arrayBuffer();

    const failures: string[] = [];
    const post = async (n: number, latencies?: number[]) => {
      const t0 = performance.now();
      try {
        const answer = await poster.post(`http://127.0.0.1:${gateway.port}/v1/workflows/bench/instances/main/channel`, {
          from: "bench",
          text: `@m${n % MEMBERS} post ${n}`,
        });
        latencies?.push(performance.now() - t0);
        if (answer.status !== 201) failures.push(`${answer.status} ${answer.text}`);
      } catch (error) {
        failures.push(String((error as Error)?.message ?? error));
      }
    };

    // Warm-up (unmeasured, but counted below like every other post).
    for (let n = 0; n < WARMUP_POSTS; n += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => post(n + k)));

    // Paced: RATE_PER_S posts a second, sent in 1 ms ticks on a schedule, not waiting for answers.
    const latencies: number[] = [];
    const gatewayCpu0 = cpuMs(gateway.pid);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const pending: Array<Promise<void>> = [];
    const paced = RATE_PER_S * SECONDS;
    const perTick = RATE_PER_S / 100;
    for (let n = 0; n < paced; n += perTick) {
      const due = t0 + (n * 1000) / RATE_PER_S;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      for (let k = 0; k < perTick; k++) pending.push(post(WARMUP_POSTS + n + k, latencies));
    }
    const sentWall = performance.now() - t0;
    await Promise.all(pending);
    const wall = performance.now() - t0;
    const clientCpu = process.cpuUsage(cpu0);
    const gatewayCpu = cpuMs(gateway.pid) - gatewayCpu0;

    const total = WARMUP_POSTS + paced;
    const workspace = new RedisWorkspaceStore(redis, { prefix: stack.prefix }).instance("bench", "main");
    const stored = await workspace.channel.length();
    const unread = await Promise.all(members.map(async (name) => (await workspace.channel.inbox(name)).unread));
    const inboxes = unread.reduce((sum, count) => sum + count, 0);
    const jsm = await jetstreamManager(nc);
    const subjects = createSubjects(stack.namespace);
    const info = await jsm.streams.info(subjects.streams.in, { subjects_filter: ">" });
    const perSubject = info.state.subjects ?? {};
    const inputs = members.map((name) => perSubject[subjects.in(name)] ?? 0);
    const inStream = inputs.reduce((sum, count) => sum + count, 0);
    const even = inputs.every((count) => count === total / MEMBERS);
    const p = summarize(latencies);
    report({
      benchmark: "channel-throughput",
      title: `21. Channel posts over HTTP at ${RATE_PER_S}/s into one workspace of ${MEMBERS} members: nothing lost`,
      rows: [
        {
          metric: `paced ${RATE_PER_S}/s for ${SECONDS} s: achieved rate (all 201s in)`,
          value: `${(paced / (wall / 1000)).toFixed(0)}/s`,
          goal: `≥ ${RATE_PER_S}/s`,
          met: paced / (wall / 1000) >= RATE_PER_S * 0.95,
        },
        { metric: "  sending schedule kept (all sent after)", value: `${(sentWall / 1000).toFixed(2)} s` },
        { metric: "POST …/channel → 201 p50", value: ms(p.p50) },
        { metric: "POST …/channel → 201 p99", value: ms(p.p99) },
        { metric: "gateway CPU per post", value: ms(gatewayCpu / paced) },
        { metric: "client CPU per post", value: ms((clientCpu.user + clientCpu.system) / 1000 / paced) },
        {
          metric: "answers other than 201",
          value: String(failures.length),
          goal: "0",
          met: failures.length === 0,
        },
        { metric: "posts stored / sent", value: `${stored} / ${total}`, goal: "all", met: stored === total },
        {
          metric: "mentions in the member inboxes / posts",
          value: `${inboxes} / ${total}`,
          goal: "all",
          met: inboxes === total,
        },
        {
          metric: "inputs in MONIRO_IN (<ns>.in.<member>) / posts",
          value: `${inStream} / ${total}${even ? `, ${total / MEMBERS} each` : `, uneven: ${inputs.join(",")}`}`,
          goal: "all",
          met: inStream === total && even,
        },
      ],
      notes: [
        `One gateway process (dist/main.js) over the machine's NATS and Redis; the client is this process (node:http, ${CONNECTIONS} keep-alive connections over loopback), posting as http:bench, each post @mentioning the next member.`,
        `${WARMUP_POSTS} unmeasured posts first (counted in the totals). No agent-runner: MONIRO_IN is a work queue, so the inputs stay in it to be counted.`,
        ...failures.slice(0, 3).map((failure) => `failure: ${failure.slice(0, 200)}`),
      ],
    });
  } finally {
    poster.close();
    await nc.close();
    redis.disconnect();
    await stack.stop();
  }
}
