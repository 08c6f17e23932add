import type { LlmProvider } from "@moniro/ports";
import type { ResolvedPolicy } from "@moniro/tool-catalog";
import type { LoopSettings } from "../loop/index.js";
import type { AutoMemorySettings } from "../memory/auto-memory.js";

/** One agent as the runtime runs it: its loop settings and the model provider it talks to. */
export interface RuntimeAgent {
  name: string;
  settings: LoopSettings;
  llm: LlmProvider;
  /** `auto_memory:` of the definition, when on. */
  autoMemory?: AutoMemorySettings;
  /**
   * The definition's `tools:` policy, resolved as the tool-executor resolves it: the runner
   * applies it to the tools it runs itself (`message`). Absent (a sub-agent, a test agent):
   * those calls go to the executor, which decides.
   */
  toolPolicy?: ResolvedPolicy;
  /** A sub-agent's parent and the parent's `subagent` call that spawned it. */
  parent?: { name: string; callId: string };
}

/** The agents this runner can run (from the agent definitions). */
export interface AgentDirectory {
  get(name: string): RuntimeAgent | undefined;
  /** Looks up an agent `get` does not know yet (a sub-agent, from Redis); later `get`s find it. */
  load?(name: string): Promise<RuntimeAgent | undefined>;
  names(): string[];
  /** Why `name` is unknown, naming where definitions are looked up (for DLQ reasons and control replies). */
  explainMissing(name: string): string;
  /** Why a deleted agent takes no more input (live registry); undefined when it was not deleted. */
  removedReason?(name: string): string | undefined;
  /** Calls `listener` with the name of each agent deleted from now on; returns the function that stops it. */
  onRemoved?(listener: (name: string) => void): () => void;
}

/** A directory over a fixed list (tests, and the wiring once definitions are loaded). */
export function staticDirectory(agents: readonly RuntimeAgent[], where = "the runner's agent list"): AgentDirectory {
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  return {
    get: (name) => byName.get(name),
    names: () => [...byName.keys()].sort(),
    explainMissing: (name) =>
      `no agent named '${name}' is defined (looked in ${where}; known agents: ${[...byName.keys()].sort().join(", ") || "none"})`,
  };
}
