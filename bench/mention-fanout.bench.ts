import { sleep } from "./support/bench-runner.js";
import { ms, report } from "./support/report.js";
import { summarize } from "./support/stats.js";
import { startTeamWorld, within } from "./support/team-world.js";

const MEMBERS = 20;
const WARMUP = 5;
const ROUNDS = 50;
const REST_MS = 5;

/**
 * Issue 14: one `channel_send` mentioning 20 members (a tool call on
 * `<ns>.tool.channel_send`, as the runner sends it, executed by a real
 * tool-executor process: the post stored, 20 immediate inputs published to
 * MONIRO_IN) → the 20 members, idle agents on the real runner in this process
 * (zero-latency model), each make their first LLM request. Measured until
 * the last of the 20.
 */
export async function run(): Promise<void> {
  const members = Array.from({ length: MEMBERS }, (_, i) => `f${i}`);
  const firstAt = new Map<string, number>();
  let allIn: (() => void) | undefined;
  const world = await startTeamWorld(members, (agent, _request, at) => {
    if (!firstAt.has(agent)) {
      firstAt.set(agent, at);
      if (firstAt.size === MEMBERS) allIn?.();
    }
    return { text: "ok" };
  });
  const text = `${members.map((name) => `@${name}`).join(" ")} please review`;
  const last: number[] = [];
  const first: number[] = [];
  const answered: number[] = [];
  let notified = 0;
  let cpuMicros = 0;
  let redisCommands = 0;
  try {
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      await world.bench.idle();
      await sleep(REST_MS);
      firstAt.clear();
      const done = new Promise<void>((resolve) => {
        allIn = resolve;
      });
      const cpu0 = process.cpuUsage();
      const sent0 = world.bench.sent().redisCommands;
      const t0 = performance.now();
      const result = await world.channelSend(text);
      const t1 = performance.now();
      if (result.isError) throw new Error(`channel_send failed: ${result.content}`);
      await within(done, 10_000, `all ${MEMBERS} first LLM requests of round ${round}`);
      await world.bench.idle();
      if (round < WARMUP) continue;
      const cpu = process.cpuUsage(cpu0);
      cpuMicros += cpu.user + cpu.system;
      redisCommands += world.bench.sent().redisCommands - sent0;
      const times = [...firstAt.values()];
      last.push(Math.max(...times) - t0);
      first.push(Math.min(...times) - t0);
      answered.push(t1 - t0);
      notified += ((result.data as { notified?: unknown[] } | undefined)?.notified ?? []).length;
    }
    await world.bench.idle();
  } finally {
    await world.close();
  }
  const all = summarize(last);
  report({
    benchmark: "mention-fanout",
    title: "20. One channel_send mentioning 20 members → all 20 first LLM requests",
    rows: [
      {
        metric: `channel_send → the 20th member's first LLM request p50 (n=${all.n})`,
        value: ms(all.p50),
        goal: "≤ 50 ms",
        met: all.p50 <= 50,
      },
      { metric: "channel_send → the 20th member's first LLM request p99", value: ms(all.p99) },
      { metric: "  channel_send → the 1st member's first LLM request p50", value: ms(summarize(first).p50) },
      {
        metric: "  channel_send → executor's answer (post stored, 20 inputs acked) p50",
        value: ms(summarize(answered).p50),
      },
      {
        metric: "  this process's CPU per woken member (runner + model + caller, cycle to its end)",
        value: ms(cpuMicros / 1000 / (MEMBERS * ROUNDS)),
      },
      {
        metric: "  the runner's Redis commands per woken member (cycle to its end)",
        value: (redisCommands / (MEMBERS * ROUNDS)).toFixed(1),
      },
      {
        metric: "members in `notified` / mentioned",
        value: `${notified} / ${MEMBERS * ROUNDS}`,
        goal: "all",
        met: notified === MEMBERS * ROUNDS,
      },
    ],
    notes: [
      `The tool-executor runs as its own process (dist/main.js); the runner (${MEMBERS} member agents), the zero-latency model and the caller run in this process, over the machine's NATS and Redis.`,
      `Each round starts from rest (every member idle, then ${REST_MS} ms of quiet); ${WARMUP} unmeasured rounds first.`,
    ],
  });
}
