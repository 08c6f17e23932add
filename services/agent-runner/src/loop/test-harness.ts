import type { InboundEnvelope, Lane, ThreadEntry, ThreadEntryData } from "@moniro/envelopes";
import type { Fence, LlmContentBlock, LlmMessage, LlmRequest, ThreadAppendOptions } from "@moniro/ports";
import {
  FakeClock,
  FakeToolBus,
  type FakeToolSpec,
  InMemoryAgentStateStore,
  InMemoryInbox,
  InMemoryLease,
  InMemoryRunEnd,
  InMemoryThreadStore,
  inbound,
  type LlmScript,
  RecordingEvents,
  RecordingOutbox,
  RecordingTracing,
  ScriptedLlm,
  type ScriptedReply,
  sequentialIds,
  type ToolHandler,
  textReply,
  toolReply,
  toolUse,
} from "@moniro/ports/test";
import { LoopControl } from "./control.js";
import type { LoopDeps } from "./deps.js";
import { runAgent } from "./run-agent.js";
import { type LoopSettingsInput, loopSettings } from "./settings.js";
import { runSupervised } from "./supervised.js";

/** Test-only wiring of the loop to the port fakes. Nothing here sleeps for real. */
export async function harness(
  options: {
    llm: LlmScript;
    tools?: Record<string, ToolHandler | FakeToolSpec>;
    settings?: Partial<LoopSettingsInput>;
    clock?: FakeClock;
    random?: () => number;
  } = { llm: { text: "" } },
) {
  const clock = options.clock ?? new FakeClock({ autoAdvance: true });
  const ids = sequentialIds();
  const envelopeIds = sequentialIds(100_000);
  const lease = new InMemoryLease(clock);
  const state = new InMemoryAgentStateStore(clock);
  const inbox = new InMemoryInbox(clock, lease);
  const threads = new InMemoryThreadStore({ lease, clock, state, inbox });
  const events = new RecordingEvents();
  const outbox = new RecordingOutbox();
  const tracing = new RecordingTracing();
  const llm = new ScriptedLlm(options.llm);
  const tools = new FakeToolBus({ ls: () => "a.txt b.txt", message: () => "sent", ...options.tools }, { clock });
  const control = new LoopControl();
  const settings = loopSettings({
    model: "test-model",
    systemPrompt: "You are Ada.",
    tools: [
      { name: "message", description: "send", inputSchema: { type: "object" } },
      { name: "skip", description: "skip", inputSchema: { type: "object" } },
      { name: "ls", description: "list", inputSchema: { type: "object" } },
    ],
    ...options.settings,
  });
  const deps: LoopDeps = {
    inbox,
    threads,
    llm,
    tools,
    clock,
    ids,
    state,
    runEnd: new InMemoryRunEnd({ lease, inbox, state, threads }),
    events,
    outbox,
    tracing,
    random: options.random ?? (() => 0.5),
  };
  /** The lease as a runtime takes it on a wake: a run that went idle released it, so the next run takes it again. */
  async function held(): Promise<Fence> {
    if (fence && lease.holds(fence)) return fence;
    const acquired = await lease.acquire("ada", "runner-1", 3_600_000);
    if (!acquired) throw new Error("lease not acquired");
    fence = acquired;
    return acquired;
  }
  let fence: Fence | undefined;
  await held();

  /**
   * Puts an input into Ada's inbox and tells a running loop, as the runtime does for every input it
   * ingests (or another runner's notice does); returns the envelope. `announced: false`: an input
   * whose notice was lost (the loop finds it by reading its inbox).
   */
  async function send(
    text: string,
    fields: Partial<Omit<InboundEnvelope, "priority">> & { priority?: Lane } = {},
    append: { enqueuedAt?: number; preemptions?: number; announced?: boolean } = {},
  ): Promise<InboundEnvelope> {
    const { announced = true, ...options } = append;
    const envelope = inbound({ agent: "ada", text, ...fields }, { ids: envelopeIds, now: clock.now() });
    await inbox.append(envelope, options);
    if (announced) control.notifyInput();
    return envelope;
  }

  return {
    clock,
    ids,
    lease,
    threads,
    inbox,
    state,
    events,
    outbox,
    tracing,
    llm,
    tools,
    control,
    settings,
    deps,
    /** The fence of the current (or last) run. */
    get fence(): Fence {
      if (!fence) throw new Error("no lease taken");
      return fence;
    },
    send,
    run: async () => runAgent(deps, await held(), settings, control),
    runSupervised: async () => runSupervised(deps, await held(), settings, control),
    thread: (context = "personal"): ThreadEntry[] => threads.entries("ada", context),
    kinds: (context = "personal"): string[] => threads.entries("ada", context).map((entry) => entry.kind),
  };
}

/** A content block as a short string: `text:...`, `tool_use:name`, `tool_result:id`, for shape assertions. */
export function shape(block: LlmContentBlock): string {
  if (block.type === "text") return `text:${block.text}`;
  if (block.type === "tool_use") return `tool_use:${block.name}`;
  return `tool_result:${block.tool_use_id}${block.is_error ? "!" : ""}`;
}

/** Every message of a request as `role: block, block`. */
export function shapes(request: LlmRequest | undefined): string[] {
  return (request?.messages ?? []).map(
    (message: LlmMessage) => `${message.role}: ${message.content.map(shape).join(" | ")}`,
  );
}

/** All text the model was shown in a request (user and assistant). */
export function allText(request: LlmRequest | undefined): string {
  return (request?.messages ?? [])
    .flatMap((message) => message.content)
    .map((block) => (block.type === "text" ? block.text : block.type === "tool_result" ? block.content : ""))
    .join("\n");
}

/** Lets pending promise callbacks run (no timers involved). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * The harness's thread appends of the entries `which` picks wait for `hold`. Appends land in the
 * order they were issued, as Redis applies the commands of one connection: one issued behind a held
 * append waits for it.
 */
export function holdWrites(
  h: Awaited<ReturnType<typeof harness>>,
  which: (entry: ThreadEntryData) => boolean,
  hold: (entries: readonly ThreadEntryData[]) => Promise<void>,
): void {
  const append = h.threads.append.bind(h.threads);
  let tail: Promise<unknown> = Promise.resolve();
  h.deps.threads.append = (
    fence: Fence,
    context: string,
    entries: readonly ThreadEntryData[],
    options?: ThreadAppendOptions,
  ) => {
    const write = tail.then(async () => {
      if (entries.some(which)) await hold(entries);
      return append(fence, context, entries, options);
    });
    tail = write.catch(() => undefined);
    return write;
  };
}

/**
 * A model that calls `ls` (id `t1`) when first asked and answers `text` after; each time it is
 * asked it records the thread as stored (`kinds`) and `count()` (say, the inbox reads so far).
 */
export function lsThenAnswer(
  h: () => Awaited<ReturnType<typeof harness>>,
  text: string,
  count: () => number = () => 0,
): { llm: () => ScriptedReply; kindsWhenAsked: string[][]; countWhenAsked: number[] } {
  const kindsWhenAsked: string[][] = [];
  const countWhenAsked: number[] = [];
  return {
    kindsWhenAsked,
    countWhenAsked,
    llm: () => {
      kindsWhenAsked.push(h().kinds());
      countWhenAsked.push(count());
      return kindsWhenAsked.length === 1 ? toolReply(toolUse("ls", {}, "t1")) : textReply(text);
    },
  };
}
