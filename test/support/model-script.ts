import {
  errorReply,
  type FakeReply,
  messageReply,
  startFakeAnthropic,
  textReply,
  toolUseReply,
} from "@moniro/llm/test";
import { type AnthropicRequestBody, systemText } from "./anthropic-body.js";

export type { FakeReply };
export { errorReply, messageReply, textReply, toolUseReply };

/** One request the fake model received for one agent. */
export interface ModelRequest {
  agent: string;
  /** 0-based among this agent's requests. */
  index: number;
  body: AnthropicRequestBody;
  receivedAt: number;
  /** A sub-agent's own name (its requests are scripted under `child-of:<parent>`). */
  child?: string;
}

/** A scripted answer: a reply, or a function of the request (may wait, e.g. for the test to act). */
export type ModelStep = FakeReply | ((request: ModelRequest) => FakeReply | Promise<FakeReply>);

export { memoryExtractionReply } from "@moniro/llm/test";

/** Served when an agent's script is used up: the model ends its turn. */
const DONE = "(e2e: nothing more to do)";

/**
 * The fake Anthropic server (`@moniro/llm/test`) shared by every agent of a
 * stack, with one script per agent: requests are told apart by the marker in
 * the agent's system prompt (`agentMarker`). Records what each agent asked
 * and what kind of reply it was served.
 */
export async function startModel() {
  const scripts = new Map<string, ModelStep[]>();
  const requests = new Map<string, ModelRequest[]>();
  const served = new Map<string, string[]>();
  const waiters = new Set<() => void>();

  const fake = await startFakeAnthropic({
    handler: async (request) => {
      const body = request.body as unknown as AnthropicRequestBody;
      const system = systemText(body);
      // A sub-agent's minimal prompt names its parent: its requests go to the script `child-of:<parent>`.
      const parent = /You are [a-z0-9_-]+--[a-z0-9]+, a sub-agent of ([a-z0-9_-]+)\./.exec(system)?.[1];
      // Requests without an agent's marker (auto-memory's extraction, …) go to the script `model:<model>`.
      const agent =
        /\[e2e-agent:([a-z0-9_-]+)\]/.exec(system)?.[1] ?? (parent ? `child-of:${parent}` : `model:${body.model}`);
      const list = requests.get(agent) ?? [];
      requests.set(agent, list);
      const child = /You are ([a-z0-9_-]+--[a-z0-9]+), a sub-agent/.exec(system)?.[1];
      const modelRequest: ModelRequest = {
        agent,
        index: list.length,
        body,
        receivedAt: request.receivedAt,
        ...(child ? { child } : {}),
      };
      list.push(modelRequest);
      for (const wake of waiters) wake();
      const step = scripts.get(agent)?.shift() ?? textReply(DONE);
      const reply = typeof step === "function" ? await step(modelRequest) : step;
      const kinds = served.get(agent) ?? [];
      served.set(agent, kinds);
      kinds.push(describe(reply));
      return reply;
    },
  });

  function describe(reply: FakeReply): string {
    return reply.kind === "error" ? "error" : reply.stopReason;
  }

  return {
    url: fake.url,
    /** Appends steps to the agent's script (served in order, one per request). */
    script(agent: string, ...steps: ModelStep[]) {
      scripts.set(agent, [...(scripts.get(agent) ?? []), ...steps]);
    },
    requests: (agent: string): ModelRequest[] => requests.get(agent) ?? [],
    /** The kind of each reply served to the agent, in order: `tool_use`, `end_turn` or `error`. */
    served: (agent: string): string[] => served.get(agent) ?? [],
    /** Resolves with the agent's first `count` requests once they arrived. */
    waitForRequests(agent: string, count: number, timeoutMs = 20_000): Promise<ModelRequest[]> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const list = requests.get(agent) ?? [];
          if (list.length >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(list.slice(0, count));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the fake model got ${(requests.get(agent) ?? []).length} of ${count} requests from '${agent}' within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => fake.close(),
  };
}
export type Model = Awaited<ReturnType<typeof startModel>>;
