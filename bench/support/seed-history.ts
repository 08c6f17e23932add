import type { ThreadEntryData } from "@moniro/envelopes";
import { RedisLease, RedisThreadStore } from "@moniro/store";
import { Redis } from "ioredis";
import { REDIS_URL } from "./bench-runner.js";

const QUESTION =
  "Could you look at what I sent you this morning and tell me, in a few lines, whether the plan still holds, what changed since yesterday, and what I should do next?";
const ANSWER =
  "The plan still holds. Two things changed since yesterday: the supplier moved the delivery to Thursday, and the budget review is now on Friday at 10. Next: confirm Thursday with the warehouse and send me the draft numbers by Wednesday evening so I can check them before the review.";

/**
 * Writes `messages` messages of conversation (half DMs from `http:bench`,
 * half replies through `message` with `final: true`) into each agent's
 * `personal` thread, through the store as the runner writes them (under the
 * agent's lease, released after), so the first DM of a fresh runner already
 * carries them.
 */
export async function seedHistory(options: { prefix: string; agents: readonly string[]; messages: number }) {
  const redis = new Redis(REDIS_URL);
  try {
    const lease = new RedisLease(redis, { prefix: options.prefix });
    const threads = new RedisThreadStore(redis, { prefix: options.prefix });
    const exchanges = Math.floor(options.messages / 2);
    for (const agent of options.agents) {
      const fence = await lease.acquire(agent, "bench-seed", 30_000);
      if (!fence) throw new Error(`cannot seed ${agent}'s thread: its lease is held`);
      const entries: ThreadEntryData[] = [];
      const ts = Date.now() - exchanges * 60_000;
      for (let i = 0; i < exchanges; i++) {
        const cycleId = `seed-${i}`;
        const at = ts + i * 60_000;
        const callId = `toolu_seed_${agent}_${i}`;
        entries.push(
          {
            kind: "input",
            cycleId,
            ts: at,
            envelopeId: `seed-${agent}-${i}`,
            source: "http:bench",
            replyTo: "http:bench",
            context: "personal",
            lane: "immediate",
            text: `(${i}) ${QUESTION}`,
            attachments: [],
          },
          {
            kind: "assistant",
            cycleId,
            ts: at + 1_000,
            step: 0,
            text: "",
            toolUses: [{ id: callId, name: "message", input: { text: `(${i}) ${ANSWER}`, final: true } }],
            stopReason: "tool_use",
            usage: { inputTokens: 2_000 + i * 90, outputTokens: 80 },
          },
          {
            kind: "tool-result",
            cycleId,
            ts: at + 1_010,
            callId,
            tool: "message",
            content: "sent",
            isError: false,
            endsTurn: true,
          },
        );
      }
      await threads.append(fence, "personal", entries);
      await lease.release(fence);
    }
  } finally {
    redis.disconnect();
  }
}
