import { RedisWorkspaceStore } from "@moniro/store";
import { deletePrefix } from "@moniro/store/test";
import { Redis } from "ioredis";
import { REDIS_URL } from "./support/bench-runner.js";
import { randomToken } from "./support/random.js";
import { ms, report } from "./support/report.js";
import { summarize } from "./support/stats.js";

const MEMBERS = 10;
const RATE_PER_S = 1_000;
const SECONDS = 5;
const BURST = 5_000;

/**
 * The workspace channel's store alone (no runner, no LLM): one instance with
 * 10 members, each post @mentioning the next member. First paced at 1,000
 * posts/s for 5 s from 10 connections (one per member), then a burst as
 * fast as the connections go; afterwards every post must be in the channel
 * and every mention in its member's inbox. The push of an immediate input to
 * the mentioned agent is not wired yet and not measured here.
 */
export async function run(): Promise<void> {
  const prefix = `${randomToken("bench")}:`;
  const admin = new Redis(REDIS_URL);
  const connections = Array.from({ length: MEMBERS }, () => new Redis(REDIS_URL));
  try {
    const members = Array.from({ length: MEMBERS }, (_, index) => ({
      name: `m${index}`,
      agent: `m${index}`,
      kind: "ref" as const,
    }));
    const workspace = new RedisWorkspaceStore(admin, { prefix }).instance("bench", "main");
    await workspace.start(members);
    const writers = connections.map((redis) => new RedisWorkspaceStore(redis, { prefix }).instance("bench", "main"));
    const post = async (index: number, n: number, latencies: number[]) => {
      const started = performance.now();
      await writers[index]?.channel.post({ from: `m${index}`, text: `@m${(index + 1) % MEMBERS} post ${n}` });
      latencies.push(performance.now() - started);
    };

    // Paced: every member posts RATE_PER_S / MEMBERS times a second, on a schedule, not waiting for answers.
    const paced: number[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const pending: Array<Promise<void>> = [];
    const perMember = (RATE_PER_S / MEMBERS) * SECONDS;
    for (let n = 0; n < perMember; n++) {
      const due = t0 + (n * 1000 * MEMBERS) / RATE_PER_S;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      for (let index = 0; index < MEMBERS; index++) pending.push(post(index, n, paced));
    }
    await Promise.all(pending);
    const pacedWall = performance.now() - t0;
    const pacedCpu = process.cpuUsage(cpu0);

    // Burst: every member's posts at once.
    const burst: number[] = [];
    const t1 = performance.now();
    await Promise.all(
      members.map(async (_, index) => {
        for (let n = 0; n < BURST / MEMBERS; n += 10) {
          await Promise.all(Array.from({ length: 10 }, (_, k) => post(index, perMember + n + k, burst)));
        }
      }),
    );
    const burstWall = performance.now() - t1;

    const total = MEMBERS * perMember + BURST;
    const stored = await workspace.channel.length();
    const unread = await Promise.all(
      members.map(async (member) => (await workspace.channel.inbox(member.name)).unread),
    );
    const mentions = unread.reduce((sum, count) => sum + count, 0);
    const p = summarize(paced);
    const b = summarize(burst);
    report({
      benchmark: "workspace-channel",
      title: "Workspace channel store: posts with @mentions into one instance of 10 members",
      rows: [
        {
          metric: `paced ${RATE_PER_S}/s for ${SECONDS} s: achieved rate`,
          value: `${((MEMBERS * perMember) / (pacedWall / 1000)).toFixed(0)}/s`,
          goal: `≥ ${RATE_PER_S}/s`,
          met: (MEMBERS * perMember) / (pacedWall / 1000) >= RATE_PER_S * 0.95,
        },
        { metric: "paced: post → stored, p50", value: ms(p.p50) },
        { metric: "paced: post → stored, p99", value: ms(p.p99) },
        {
          metric: "paced: client CPU per post",
          value: ms((pacedCpu.user + pacedCpu.system) / 1000 / (MEMBERS * perMember)),
        },
        { metric: `burst of ${BURST}: rate`, value: `${(BURST / (burstWall / 1000)).toFixed(0)}/s` },
        { metric: "burst: post → stored, p50", value: ms(b.p50) },
        {
          metric: "posts stored / sent",
          value: `${stored} / ${total}`,
          goal: "all",
          met: stored === total,
        },
        { metric: "unread mentions / posts", value: `${mentions} / ${total}`, goal: "all", met: mentions === total },
      ],
      notes: ["one client process, 10 Redis connections (one per member); the mentioned agent's push is not wired yet"],
    });
  } finally {
    await deletePrefix(admin, prefix);
    await Promise.all([admin, ...connections].map((redis) => redis.quit().catch(() => undefined)));
  }
}
