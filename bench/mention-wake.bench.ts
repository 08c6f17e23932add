import { sleep } from "./support/bench-runner.js";
import { startFloor } from "./support/floor.js";
import { newUserText } from "./support/instant-llm.js";
import { ms, report } from "./support/report.js";
import { summarize } from "./support/stats.js";
import { CHANNEL_SEND_SPEC, CONTEXT, startTeamWorld, within } from "./support/team-world.js";

const MEMBERS = 10;
const WARMUP = 30;
const ITERATIONS = 300;
/** Pause after the members went idle, so the wake is from rest (lease released, loop gone). */
const REST_MS = 5;
/** Floor steps timed before each mention, so the floor sees the same machine state as the wakes. */
const FLOOR_PER_WAKE = 10;
/** A member on the runner whose model @mentions (the agent-to-agent path, second figure). */
const LEAD = "lead";

/**
 * Issue 14: an @mention to the mentioned idle member's first LLM request.
 * The @mention is a `channel_send "@m<i> …"` tool call, sent on
 * `<ns>.tool.channel_send` the way the runner sends a tool call (its
 * NatsToolBus) and executed by a real tool-executor process: membership read
 * from Redis, the post stored, the immediate input published to MONIRO_IN
 * (JetStream ack) before the executor answers. The mentioned member is one of
 * 10 idle agents on the real runner in this process (zero-latency model),
 * which ingests the input, checks the membership, builds the workspace
 * context (channel since last seen, inbox, documents) and calls the model.
 */
export async function run(): Promise<void> {
  let calledAt = Number.NaN;
  let wakeUp: (() => void) | undefined;
  let wanted = "";
  const members = Array.from({ length: MEMBERS }, (_, i) => `m${i}`);
  let modelAnsweredAt = Number.NaN;
  const world = await startTeamWorld(
    [...members, LEAD],
    (agent, request, at) => {
      if (agent === LEAD) {
        const asked = /mention-(m\d+)-(\d+)/.exec(newUserText(request));
        if (!asked) return { text: "ok" };
        modelAnsweredAt = at;
        return {
          toolUses: [
            { id: `send-${asked[2]}`, name: "channel_send", input: { text: `@${asked[1]} check line ${asked[2]}` } },
          ],
        };
      }
      if (agent === wanted) {
        calledAt = at;
        wakeUp?.();
      }
      return { text: "ok" };
    },
    { settings: { tools: [CHANNEL_SEND_SPEC] } },
  );
  const floor = await startFloor();
  const total: number[] = [];
  const answered: number[] = [];
  const afterAnswer: number[] = [];
  const cycles: number[] = [];
  let errors = 0;
  let redisCommands = 0;
  const fromAgent: number[] = [];
  try {
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      await world.bench.idle();
      await floor.sample(i < WARMUP ? 0 : FLOOR_PER_WAKE);
      await sleep(REST_MS);
      wanted = members[i % MEMBERS] as string;
      calledAt = Number.NaN;
      const woken = new Promise<void>((resolve) => {
        wakeUp = resolve;
      });
      const sent0 = world.bench.sent().redisCommands;
      const t0 = performance.now();
      const result = await world.channelSend(`@${wanted} check line ${i}`);
      const t1 = performance.now();
      if (result.isError) throw new Error(`channel_send failed: ${result.content}`);
      await within(woken, 10_000, `${wanted}'s first LLM request after the mention ${i}`);
      await world.bench.idle();
      if (i < WARMUP) continue;
      redisCommands += world.bench.sent().redisCommands - sent0;
      if (!/"notified":\["m\d+"\]/.test(JSON.stringify(result.data ?? {}))) errors++;
      total.push(calledAt - t0);
      answered.push(t1 - t0);
      afterAnswer.push(calledAt - t1);
      cycles.push((world.bench.spans.lastStart.get("cycle") ?? Number.NaN) - t0);
    }
    await world.bench.idle();
    // From an agent: LEAD's model answers an input with the channel_send call; its runner sends it.
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      await world.bench.idle();
      await sleep(REST_MS);
      wanted = members[i % MEMBERS] as string;
      calledAt = Number.NaN;
      modelAnsweredAt = Number.NaN;
      const woken = new Promise<void>((resolve) => {
        wakeUp = resolve;
      });
      await world.publishHere(LEAD, `mention-${wanted}-${i}`);
      await within(woken, 10_000, `${wanted}'s first LLM request after ${LEAD}'s mention ${i}`);
      await world.bench.idle();
      if (i < WARMUP) continue;
      fromAgent.push(calledAt - modelAnsweredAt);
    }
  } finally {
    await floor.close();
    await world.close();
  }
  const wake = summarize(total);
  const step = floor.summary().step;
  report({
    benchmark: "mention-wake",
    title: "19. @mention (channel_send via the tool-executor) → the mentioned idle member's first LLM request",
    rows: [
      {
        metric: `channel_send → mentioned member's LLM request p50 (n=${wake.n})`,
        value: ms(wake.p50),
        goal: "≤ 5 ms",
        met: wake.p50 <= 5,
      },
      { metric: "channel_send → mentioned member's LLM request p99", value: ms(wake.p99) },
      {
        metric: "  / same-run floor step p50 (1 NATS request + 2 Redis round trips)",
        value: `${(wake.p50 / step.p50).toFixed(1)}× (floor ${ms(step.p50)})`,
      },
      {
        metric: "  channel_send → executor's answer (post stored, input acked) p50",
        value: ms(summarize(answered).p50),
      },
      { metric: "  executor's answer → LLM request p50", value: ms(summarize(afterAnswer).p50) },
      { metric: "  channel_send → cycle start (input in thread) p50", value: ms(summarize(cycles).p50) },
      {
        metric: "  the runner's Redis commands per wake (cycle to its end)",
        value: (redisCommands / ITERATIONS).toFixed(1),
      },
      {
        metric: `${LEAD}'s model answer holding channel_send → mentioned member's LLM request p50 / p99 (n=${ITERATIONS})`,
        value: `${ms(summarize(fromAgent).p50)} / ${ms(summarize(fromAgent).p99)}`,
      },
      { metric: "answers without the member in `notified`", value: String(errors), goal: "0", met: errors === 0 },
    ],
    notes: [
      `The tool-executor runs as its own process (dist/main.js); the runner (with ${MEMBERS} member agents), the zero-latency model and the caller run in this process, over the machine's NATS and Redis. Context ${CONTEXT}; the sender is a member that is not on the runner.`,
      `Second figure: ${LEAD} (a member on the same runner) gets an input in ${CONTEXT}; its model answers with the channel_send call, which its runner persists and sends to the executor; measured from that model answer. ${LEAD}'s cycle goes on (the tool result, its next LLM request) while the member wakes. Each wake starts from rest: no loop running, then ${REST_MS} ms of quiet; the members take turns. ${WARMUP} unmeasured wakes first. The floor is timed in between (${FLOOR_PER_WAKE} steps before each wake).`,
    ],
  });
}
