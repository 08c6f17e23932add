import type { AgentStateStore, Inbox, LlmProvider, RunEnd, ThreadStore, ToolBus } from "@moniro/ports";
import { systemClock, ulidIds } from "@moniro/ports";
import { RecordingEvents, RecordingOutbox, RecordingTracing } from "@moniro/ports/test";
import type { LoopDeps, LoopSettingsInput } from "../loop/index.js";
import { loopSettings } from "../loop/index.js";
import type { RuntimeAgent } from "./agent-directory.js";

type Falsy = undefined | null | false | 0 | "";

/** Polls until the probe returns something truthy; fails naming `what` after `timeoutMs` (a hang guard, not a timing assertion). */
export async function eventually<T>(
  probe: () => Promise<T | Falsy> | T | Falsy,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const TEST_TOOLS = [
  { name: "message", description: "send", inputSchema: { type: "object" } },
  { name: "skip", description: "skip", inputSchema: { type: "object" } },
  { name: "ls", description: "list", inputSchema: { type: "object" } },
];

/** A RuntimeAgent for tests. */
export function testAgent(name: string, llm: LlmProvider, settings: Partial<LoopSettingsInput> = {}): RuntimeAgent {
  return {
    name,
    llm,
    settings: loopSettings({
      model: "test-model",
      systemPrompt: `You are ${name}.`,
      tools: TEST_TOOLS,
      retry: { baseMs: 1, maxAttempts: 2, jitter: 0 },
      restart: { minMs: 1, maxMs: 5, maxRestarts: 2 },
      ...settings,
    }),
  };
}

/** Loop ports over given stores, with recorders for the rest; real time (the runtime is not pure). */
export function testLoopDeps(ports: {
  inbox: Inbox;
  threads: ThreadStore;
  state: AgentStateStore;
  runEnd: RunEnd;
  tools: ToolBus;
  events?: RecordingEvents;
  outbox?: RecordingOutbox;
}): (agent: RuntimeAgent) => LoopDeps {
  const events = ports.events ?? new RecordingEvents();
  const outbox = ports.outbox ?? new RecordingOutbox();
  const tracing = new RecordingTracing();
  return (agent) => ({
    inbox: ports.inbox,
    threads: ports.threads,
    state: ports.state,
    runEnd: ports.runEnd,
    tools: ports.tools,
    llm: agent.llm,
    clock: systemClock,
    ids: ulidIds,
    events,
    outbox,
    tracing,
    random: () => 0.5,
  });
}
