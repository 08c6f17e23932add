import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildSystemPrompt,
  personalSections,
  RUNNER_REDIS_OPTIONS,
  runtimeAgentOf,
  startRunner,
  staticDirectory,
} from "@moniro/agent-runner";
import { loadAgentDefinitions } from "@moniro/config";
import { createSubjects, stamp } from "@moniro/envelopes";
import { createProvider } from "@moniro/llm";
import { type FakeRequestBody, startFakeAnthropic } from "@moniro/llm/test";
import { DEFAULT_SNAPSHOT_CACHE, RedisPersonalContext } from "@moniro/store";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import { cleanup, NATS_URL, REDIS_URL, sleep } from "./support/bench-runner.js";
import { randomToken } from "./support/random.js";
import { type Row, report } from "./support/report.js";
import { fmt, summarize } from "./support/stats.js";
import { charsOver4, claudeTokenizer, promptParts } from "./support/token-count.js";

const ROUNDS = 3_000;
const WARMUP = 300;
const BUDGET = 1_200;
const NOTES = 5;

/** Personal context of one agent, written through the port (what its tools would have written). */
async function fill(
  personal: RedisPersonalContext,
  agent: string,
  size: { memories: number; todos: number; notes: number },
): Promise<void> {
  for (let i = 0; i < size.memories; i++) {
    await personal.setMemory(
      agent,
      `fact-${String(i).padStart(4, "0")}`,
      `Something learned about topic ${i}: ${"x".repeat(50)}`,
    );
  }
  for (let i = 0; i < size.todos; i++) await personal.addTodo(agent, `Follow up on item ${i}, ${"y".repeat(30)}`);
  for (let i = 0; i < size.notes; i++) await personal.addNote(agent, `Note ${i}: ${"z".repeat(120)}`, "personal");
}

/** What the loop does once per cycle (system-prompt.ts): one snapshot read, the budgeted sections, the prompt. */
async function assembleOnce(personal: RedisPersonalContext, agent: string): Promise<string> {
  const snapshot = await personal.promptSnapshot(agent, { notes: NOTES });
  return buildSystemPrompt({
    base: "You are a benchmark agent.",
    soul: { role: "reviewer", expertise: ["typescript"], principles: ["Explain the why"] },
    ...personalSections(snapshot, BUDGET, NOTES),
  });
}

async function assemblyCost(personal: RedisPersonalContext, agent: string) {
  for (let i = 0; i < WARMUP; i++) await assembleOnce(personal, agent);
  const wall: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await assembleOnce(personal, agent);
    wall.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  const snapshot = await personal.promptSnapshot(agent, { notes: NOTES });
  const pure: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    buildSystemPrompt({ base: "You are a benchmark agent.", ...personalSections(snapshot, BUDGET, NOTES) });
    pure.push(performance.now() - t0);
  }
  return {
    wall: summarize(wall),
    cpuPerCycle: (cpu.user + cpu.system) / 1000 / ROUNDS,
    pure: summarize(pure),
    prompt: await assembleOnce(personal, agent),
  };
}

/** The first request of `agents` (the real runner, the Anthropic adapter, the fake server), by agent name. */
async function firstRequests(prefix: string, names: readonly string[]): Promise<Map<string, FakeRequestBody>> {
  const fake = await startFakeAnthropic({ handler: () => "ok" });
  const dir = mkdtempSync(join(tmpdir(), "moniro-bench-agents-"));
  for (const name of names) {
    writeFileSync(
      join(dir, `${name}.yaml`),
      `name: ${name}\nmodel: claude-bench\nbackend: anthropic\nprompt:\n  system: You are ${name}, a helpful assistant.\n`,
    );
  }
  const namespace = prefix.slice(0, -1);
  const subjects = createSubjects(namespace);
  const nc = await connect({ servers: NATS_URL, name: `${namespace}-runner` });
  const redis = new Redis(REDIS_URL, RUNNER_REDIS_OPTIONS);
  const env = { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "bench-key" };
  const runner = await startRunner({
    holder: `${namespace}-runner`,
    subjects,
    nc,
    redis,
    redisPrefix: prefix,
    directory: staticDirectory(
      [...(await loadAgentDefinitions(dir)).values()].map((definition) =>
        runtimeAgentOf(definition, { llmFor: (agent) => createProvider(agent, env) }),
      ),
      dir,
    ),
  });
  try {
    const js = jetstream(nc);
    for (const agent of names) {
      const envelope = { ...stamp(), agent, source: "http:bench", text: "hello" };
      await js.publish(subjects.in(agent), JSON.stringify(envelope));
    }
    const deadline = Date.now() + 20_000;
    while (fake.requests.length < names.length && Date.now() < deadline) await sleep(20);
    const byAgent = new Map<string, FakeRequestBody>();
    for (const request of fake.requests) {
      const name = names.find((candidate) => promptParts(request.body).system.startsWith(`You are ${candidate},`));
      if (name && !byAgent.has(name)) byAgent.set(name, request.body);
    }
    return byAgent;
  } finally {
    await runner.stop();
    await nc.drain();
    redis.disconnect();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Prompt assembly (seed 004): what reading the personal context and building
 * the system prompt costs per cycle (= at most per LLM call: the cycle's
 * later calls reuse it), and the input tokens of a fresh agent's first
 * request, against an agent whose memory, todos and notes overflow the budget.
 */
export async function run(): Promise<void> {
  const prefix = `${randomToken("bench")}:`;
  const subjects = createSubjects(prefix.slice(0, -1));
  const redis = new Redis(REDIS_URL, RUNNER_REDIS_OPTIONS);
  const admin = await connect({ servers: NATS_URL });
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    // As the runner builds it: the snapshot cache on, invalidated by the version every write bumps.
    const personal = new RedisPersonalContext(redis, { prefix, snapshotCache: DEFAULT_SNAPSHOT_CACHE });
    const uncached = new RedisPersonalContext(redis, { prefix });
    const profiles = [
      { agent: "fresh", size: { memories: 0, todos: 0, notes: 0 } },
      { agent: "typical", size: { memories: 20, todos: 3, notes: 5 } },
      { agent: "full", size: { memories: 500, todos: 50, notes: 20 } },
    ];
    for (const profile of profiles) {
      await fill(personal, profile.agent, profile.size);
      const cost = await assemblyCost(personal, profile.agent);
      const changed = await assemblyCost(uncached, profile.agent);
      const { memories, todos, notes: noteCount } = profile.size;
      rows.push(
        {
          metric: `assembly per cycle, ${profile.agent} (${memories} memories, ${todos} todos, ${noteCount} notes): p50 / p99`,
          value: `${fmt(cost.wall.p50)} / ${fmt(cost.wall.p99)}`,
          goal: "≤ 1 ms p50",
          met: cost.wall.p50 <= 1,
        },
        { metric: "  CPU per cycle (this process)", value: fmt(cost.cpuPerCycle) },
        {
          metric: "  when the context changed since the last cycle (full read): p50 / p99",
          value: `${fmt(changed.wall.p50)} / ${fmt(changed.wall.p99)}`,
        },
        { metric: "    CPU per cycle", value: fmt(changed.cpuPerCycle) },
        { metric: "  of it without the Redis read (sections + prompt): p50", value: fmt(cost.pure.p50) },
        { metric: "  system prompt, chars/4 tokens", value: String(charsOver4(cost.prompt)) },
      );
    }

    const requests = await firstRequests(prefix, ["fresh", "full"]);
    const tokenizer = await claudeTokenizer();
    for (const agent of ["fresh", "full"]) {
      const body = requests.get(agent);
      if (!body) {
        rows.push({ metric: `input tokens, first request, ${agent}`, value: "no request", met: false });
        continue;
      }
      const parts = promptParts(body);
      const count = (text: string) => (tokenizer ? tokenizer(text) : charsOver4(text));
      const total = count(parts.system) + count(parts.tools) + count(parts.messages);
      rows.push({
        metric: `input tokens, first request, ${agent === "fresh" ? "a fresh agent" : "full personal context"} (${tokenizer ? "Claude tokenizer" : "chars/4"})`,
        value: String(total),
        ...(agent === "fresh" ? { goal: "≤ 3,000", met: total <= 3_000 } : {}),
      });
      rows.push({
        metric: "  system / tool schemas / messages",
        value: `${count(parts.system)} / ${count(parts.tools)} / ${count(parts.messages)}`,
      });
    }
    notes.push(
      `Assembly = the loop's once-per-cycle work (loop/system-prompt.ts): one PersonalContext.promptSnapshot over the shared Redis on loopback (the runner's: a GET of the context version, and the snapshot reused while it has not moved; "changed": every cycle a full read, GET + HGETALL memory + HGETALL todo + XREVRANGE notes in one MULTI, as after any write), the token-budgeted sections (${BUDGET} tokens, ${NOTES} notes), the system prompt. ${ROUNDS} cycles after ${WARMUP} warm-up ones, one at a time. Every later LLM call of a cycle reuses the prompt (0 cost); after a compaction it is read again. In the runner the read is issued at the cycle's start, beside the input's thread append, so its round trip overlaps that one.`,
      `First requests: the real runner in this process with the Anthropic adapter against the fake Anthropic server (@moniro/llm/test), default tool profile, DM "hello". 'full' has 500 memories, 50 todos and 20 notes: the budget keeps its personal sections to about ${BUDGET} tokens plus the lines that name the tools for the rest.`,
      "The machine is shared (2 vCPUs, several engineers' builds and tests): wall times are upper bounds.",
    );
  } finally {
    await cleanup(admin, redis, subjects, prefix).catch(() => undefined);
    redis.disconnect();
    await admin.close();
  }
  report({
    benchmark: "prompt-assembly",
    title: "Prompt assembly (seed 004): cost per LLM call, first-request tokens",
    rows,
    notes,
  });
}
