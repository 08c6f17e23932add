import type { EventSink, LlmProvider, PersonalContext } from "@moniro/ports";
import { classify } from "@moniro/ports";
import type { CompletedInstruction } from "../loop/index.js";
import { parseExtraction } from "./extraction-answer.js";
import { extractionRequest } from "./extraction-prompt.js";

/** An agent's `auto_memory:` block, resolved. */
export interface AutoMemorySettings {
  model: string;
  maxEntries: number;
}

/** Default cap of memories written per instruction. */
export const DEFAULT_MAX_ENTRIES = 5;
/** An extraction call that takes longer is abandoned. */
const EXTRACTION_TIMEOUT_MS = 60_000;

/**
 * Auto-memory (seed 004): after an instruction completes, a fast model reads
 * its cycle and the knowledge worth keeping is written into the agent's
 * memory as `decision:…`, `pattern:…`, `outcome:…`. It runs after the cycle,
 * off the loop's path (the loop does not wait), through the agent's own
 * LlmProvider with the block's model. A `memory-extracted` event says what
 * was written (an empty list for a trivial exchange); a failure is an
 * `error` event with `phase: "auto-memory"` and writes nothing.
 */
export class AutoMemory {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      personal: Pick<PersonalContext, "listMemory" | "setMemory">;
      events: EventSink;
      signal?: AbortSignal;
    },
  ) {}

  /** Starts an extraction and returns at once. */
  extract(instruction: CompletedInstruction, llm: LlmProvider, settings: AutoMemorySettings): void {
    // A heartbeat and its HEARTBEAT_OK teach nothing: no model call.
    if (instruction.entries.every((entry) => entry.kind !== "input" || entry.source === "cron:heartbeat")) return;
    const job = this.run(instruction, llm, settings).finally(() => this.running.delete(job));
    this.running.add(job);
  }

  /** Resolves once every started extraction has finished (graceful stop, tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async run(instruction: CompletedInstruction, llm: LlmProvider, settings: AutoMemorySettings): Promise<void> {
    const { agent, cycleId } = instruction;
    try {
      const memory = await this.deps.personal.listMemory(agent);
      const request = extractionRequest({
        model: settings.model,
        entries: instruction.entries,
        memory,
        maxEntries: settings.maxEntries,
      });
      const timeout = AbortSignal.timeout(EXTRACTION_TIMEOUT_MS);
      const signal = this.deps.signal ? AbortSignal.any([this.deps.signal, timeout]) : timeout;
      const response = await llm.stream(request, { signal });
      const parsed = parseExtraction(response.text, settings.maxEntries);
      if (!parsed.ok) {
        this.deps.events.emit(agent, "error", {
          phase: "auto-memory",
          cycleId,
          errorClass: "permanent",
          message: `auto-memory wrote nothing: ${parsed.reason}`,
        });
        return;
      }
      for (const entry of parsed.memories) await this.deps.personal.setMemory(agent, entry.key, entry.value);
      this.deps.events.emit(agent, "memory-extracted", {
        cycleId,
        context: instruction.context,
        model: settings.model,
        entries: parsed.memories,
        usage: response.usage,
      });
    } catch (error) {
      this.deps.events.emit(agent, "error", {
        phase: "auto-memory",
        cycleId,
        errorClass: classify(error),
        message: `auto-memory failed: ${(error as Error)?.message ?? String(error)}`,
      });
    }
  }
}
