import { toolSpecsFor } from "@moniro/agent-runner";
import type { Usage } from "@moniro/envelopes";
import { createAnthropicProvider } from "@moniro/llm";
import {
  type FakeAnthropicHandler,
  type FakeRequestBlock,
  messageReply,
  startFakeAnthropic,
  textReply,
} from "@moniro/llm/test";
import type { LlmProvider } from "@moniro/ports";
import { type BenchRunner, startBenchRunner } from "./support/bench-runner.js";
import { report } from "./support/report.js";

/** Issue 17: the length of the conversation the outside comparison measured. */
const MESSAGES = 80;
/** Billing relative to base input (PROTOCOLS.md B5; the API's pricing table): 5-minute cache write, cache read. */
const WRITE_WEIGHT = 1.25;
const READ_WEIGHT = 0.1;

const SYSTEM_PROMPT = [
  "You are Ada, the team's assistant. You answer questions about the deploy pipeline, the on-call rota",
  "and the shared calendar, briefly and precisely. When you do not know, say so and say who would.",
  "Prefer one message per answer. Never invent ticket numbers, dates or names.",
].join(" ");

const TOPICS = [
  "did the deploy of the billing service finish?",
  "who is on call this weekend, and is the rota in the shared calendar yet?",
  "can you remind me what we decided about the retry policy for the webhook consumer last week? I think it was exponential with a cap but I am not sure about the numbers.",
  "thanks!",
  "is the staging database still on the old version, or did the upgrade go through on Tuesday as planned?",
  "please note that I am out on Friday afternoon.",
  "what time is the incident review tomorrow?",
  "the dashboard shows a spike in 502s around 14:05 — anything deployed then?",
];

interface Variant {
  name: string;
  promptCaching: boolean;
  final: boolean;
}

const VARIANTS: Variant[] = [
  { name: "today (caching off, no final)", promptCaching: false, final: false },
  { name: "caching on, no final", promptCaching: true, final: false },
  { name: "final, caching off", promptCaching: false, final: true },
  { name: "new (caching on, final)", promptCaching: true, final: true },
];

interface Figures {
  calls: number;
  usage: Required<Usage>;
  billed: number;
  requestBytes: number;
  firstRequestTokens: number;
}

/**
 * Issue 17, "LLM calls per simple reply" and "billed-equivalent input tokens
 * per reply": an 80-message conversation with one agent (the real runner in
 * process over NATS and Redis, the real @anthropic-ai/sdk against the fake
 * Anthropic server, which simulates prompt caching as the API documents it).
 * Each DM is answered with one `message`; the variants differ only in
 * MONIRO_LLM_PROMPT_CACHING and whether the model's message says `final`.
 */
export async function run(): Promise<void> {
  const results = new Map<string, Figures>();
  for (const variant of VARIANTS) results.set(variant.name, await conversation(variant));
  const today = results.get(VARIANTS[0]?.name ?? "") as Figures;
  const fresh = results.get(VARIANTS[3]?.name ?? "") as Figures;
  const perReply = (value: number) => (value / MESSAGES).toFixed(value / MESSAGES >= 100 ? 0 : 2);
  const rows = [...results.entries()].flatMap(([name, figures]) => [
    { metric: `${name}: LLM calls per reply`, value: perReply(figures.calls) },
    {
      metric: `${name}: input tokens per reply (uncached / read / written)`,
      value: `${perReply(figures.usage.inputTokens)} / ${perReply(figures.usage.cacheReadInputTokens)} / ${perReply(figures.usage.cacheCreationInputTokens)}`,
    },
    { metric: `${name}: billed-equivalent input tokens per reply`, value: perReply(figures.billed) },
    { metric: `${name}: request bytes per reply`, value: `${(figures.requestBytes / MESSAGES / 1024).toFixed(1)} KiB` },
  ]);
  const ratio = fresh.billed / today.billed;
  report({
    benchmark: "llm-cost",
    title: `LLM cost of an ${MESSAGES}-message conversation (real SDK, fake Anthropic server)`,
    rows: [
      {
        metric: "new: LLM calls per simple reply",
        value: perReply(fresh.calls),
        goal: "≤ 1.05",
        met: fresh.calls / MESSAGES <= 1.05,
      },
      {
        metric: "new: billed-equivalent input per reply vs today",
        value: `${(ratio * 100).toFixed(1)} %`,
        goal: "≤ 40 %",
        met: ratio <= 0.4,
      },
      { metric: "first request, input tokens (all variants)", value: String(fresh.firstRequestTokens) },
      ...rows,
    ],
    notes: [
      `billed-equivalent = uncached + ${READ_WEIGHT} × cache read + ${WRITE_WEIGHT} × cache write (5-minute lifetime), PROTOCOLS.md B5`,
      "tokens are the fake server's estimate (4 characters per token) over the JSON of each block; the API's minimum cacheable prefix (1,024 tokens) applies",
      "DMs follow each other without pause: a conversation with gaps over 5 minutes reads less from the cache",
    ],
  });
}

async function conversation(variant: Variant): Promise<Figures> {
  const fake = await startFakeAnthropic({ handler: modelHandler(variant.final) });
  const usages: Usage[] = [];
  const llm = counting(
    createAnthropicProvider({ apiKey: "bench-key", baseURL: fake.url, promptCaching: variant.promptCaching }),
    usages,
  );
  let answered: (() => void) | undefined;
  let bench: BenchRunner | undefined;
  try {
    bench = await startBenchRunner({
      agents: ["ada"],
      llm,
      decide: () => ({}),
      tools: {
        message: (call) => {
          answered?.();
          return `Sent to http:bench (id ${call.callId}).`;
        },
      },
      settings: { systemPrompt: SYSTEM_PROMPT, tools: toolSpecsFor(), model: "claude-bench" },
    });
    for (let i = 0; i < MESSAGES; i++) {
      const done = new Promise<void>((resolve) => {
        answered = resolve;
      });
      await bench.publish("ada", `(${i + 1}) ${TOPICS[i % TOPICS.length]}`);
      await done;
      await bench.idle();
    }
  } finally {
    await bench?.close();
    await fake.close();
  }
  const usage = usages.reduce<Required<Usage>>(
    (sum, one) => ({
      inputTokens: sum.inputTokens + one.inputTokens,
      outputTokens: sum.outputTokens + one.outputTokens,
      cacheReadInputTokens: sum.cacheReadInputTokens + (one.cacheReadInputTokens ?? 0),
      cacheCreationInputTokens: sum.cacheCreationInputTokens + (one.cacheCreationInputTokens ?? 0),
    }),
    { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  );
  const first = usages[0];
  return {
    calls: fake.requests.length,
    usage,
    billed:
      usage.inputTokens + READ_WEIGHT * usage.cacheReadInputTokens + WRITE_WEIGHT * usage.cacheCreationInputTokens,
    requestBytes: fake.requests.reduce((sum, request) => sum + request.rawBody.length, 0),
    firstRequestTokens: first
      ? first.inputTokens + (first.cacheReadInputTokens ?? 0) + (first.cacheCreationInputTokens ?? 0)
      : 0,
  };
}

/** A model that answers each new DM with one `message` (with `final` or not), and ends its turn after the result. */
function modelHandler(final: boolean): FakeAnthropicHandler {
  return (request) => {
    const last = request.body.messages.at(-1);
    const blocks: FakeRequestBlock[] =
      typeof last?.content === "string" ? [{ type: "text", text: last.content }] : (last?.content ?? []);
    const inputs = blocks.filter((block) => block.type === "text" && /^\[http:/.test(block.text ?? ""));
    if (inputs.length === 0) return textReply("Answered; nothing else to do.");
    const said = inputs.map((block) => (block.text ?? "").replace(/^\[[^\]]+\]\s*/, "")).join(" / ");
    return messageReply(
      `About ${said.slice(0, 60)}: here is what I know, in two short sentences. Ask if you need more.`,
      {
        final,
        monologue: "A question from the team; I know this one and answer it directly.",
      },
    );
  };
}

/** The provider, recording each response's usage. */
function counting(llm: LlmProvider, usages: Usage[]): LlmProvider {
  return {
    name: llm.name,
    async stream(request, options) {
      const response = await llm.stream(request, options);
      usages.push(response.usage);
      return response;
    },
  };
}
