import { randomUUID } from "node:crypto";
import { TAG_PATTERN, type ToolUse } from "@moniro/envelopes";
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResponse } from "@moniro/ports";
import { type ConversationState, type PendingInput, readConversation } from "./conversation.js";
import { bySource, replyText } from "./reply-text.js";

export interface MockProviderOptions {
  /** How the agent introduces itself ("Hello! I'm <agentName>."). */
  agentName?: string;
  /** Named in the reply as where the listing came from, e.g. a workspace name or path. */
  workspaceHint?: string;
  /** Each step takes this long (abortable), to watch deltas or interrupt a step in a demo. */
  stepDelayMs?: number;
}

type Decision = Pick<LlmResponse, "text" | "toolUses">;

/**
 * An in-process model for demos and tests without network or key. Per input
 * it lists the workspace (`ls`), then answers with `message` what it was told
 * and what it saw, with `final: true` (the turn ends with it: two LLM calls per
 * DM). Asked again anyway (input arrived meanwhile, or a runner that ignores
 * `final`), it answers what is new or ends its turn. It decides only from the request, so
 * it handles injected inputs and never loops: every step either makes
 * progress on the pending inputs or ends the turn. Tools the agent lacks are
 * skipped.
 */
export function createMockProvider(options: MockProviderOptions = {}): LlmProvider {
  return {
    name: "mock",
    async stream(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<LlmResponse> {
      const { signal, onTextDelta } = callOptions;
      if (signal?.aborted) throw signal.reason;
      const decision = decide(readConversation(request), toolNames(request), options);
      const chunks = decision.text.match(/\S+\s*/g) ?? [];
      for (const chunk of chunks) {
        await pause((options.stepDelayMs ?? 0) / Math.max(1, chunks.length), signal);
        onTextDelta?.(chunk);
      }
      if (chunks.length === 0) await pause(options.stepDelayMs ?? 0, signal);
      // Ids must be unique in the whole thread, across runner restarts too.
      const toolUses = decision.toolUses.map((use) => ({
        ...use,
        id: `toolu_mock_${randomUUID().replaceAll("-", "")}`,
      }));
      return {
        text: decision.text,
        toolUses,
        stopReason: toolUses.length > 0 ? "tool_use" : "end_turn",
        usage: {
          inputTokens: Math.ceil(JSON.stringify(request).length / 4),
          outputTokens: Math.ceil((decision.text.length + JSON.stringify(toolUses).length) / 4),
        },
      };
    },
  };
}

function decide(state: ConversationState, tools: Set<string>, options: MockProviderOptions): Decision {
  if (state.lastRole !== "user") return end("Nothing new to respond to.");
  if (state.pending.length === 0) {
    const failed = state.messageResults.find((result) => result.isError);
    if (failed) return end(`My message could not be sent (${failed.content}); stopping here.`);
    return end(state.messageResults.length > 0 ? "Replied. Nothing else to do." : "Nothing to answer.");
  }
  const isHeartbeat = (input: PendingInput) => input.source === "cron:heartbeat";
  if (state.pending.every(isHeartbeat)) {
    const calm = "Heartbeat: all is well.";
    return tools.has("message")
      ? call(calm, [{ name: "message", input: { text: "HEARTBEAT_OK", final: true } }])
      : end(calm);
  }
  const inputs = state.pending.filter((input) => !isHeartbeat(input));
  if (state.listing === undefined && tools.has("ls")) {
    return call("Let me look at my workspace first.", [{ name: "ls", input: { path: "." } }]);
  }
  if (!tools.has("message")) {
    return end(`I cannot send messages (no 'message' tool). I would say: ${replyText(inputs, state.listing, options)}`);
  }
  // One message per sender; with several senders each is addressed explicitly.
  const groups = bySource(inputs);
  // The last message ends the turn (`final`): no further step unless new input arrived meanwhile.
  const messages = groups.map((group, index) => {
    const source = group[0]?.source;
    const to = groups.length > 1 && source && TAG_PATTERN.test(source) ? { to: source } : {};
    const final = index === groups.length - 1 ? { final: true } : {};
    return { name: "message", input: { ...to, text: replyText(group, state.listing, options), ...final } };
  });
  const count = inputs.length === 1 ? "the input" : `${inputs.length} inputs`;
  return call(`Replying to ${count}${groups.length > 1 ? ` from ${groups.length} senders` : ""}.`, messages);
}

function call(text: string, uses: Array<Omit<ToolUse, "id">>): Decision {
  return { text, toolUses: uses.map((use) => ({ id: "", ...use })) };
}

function end(text: string): Decision {
  return { text, toolUses: [] };
}

function toolNames(request: LlmRequest): Set<string> {
  return new Set(request.tools.map((tool) => tool.name));
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}
