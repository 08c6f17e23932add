import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CHILD_SEPARATOR,
  childNameOf,
  isChildName,
  parentOfChild,
  stamp,
  subagentMetaOf,
  type ToolCallEnvelope,
  type ToolResultEnvelope,
} from "@moniro/envelopes";
import type { Clock, EventSink, Inbox, ToolBus } from "@moniro/ports";
import type { ChildDefinition, ChildRecords } from "@moniro/store";
import { SUBAGENT_TOOL, subagentInputSchema } from "@moniro/tool-catalog";
import type { AgentDirectory } from "../runtime/agent-directory.js";
import type { InternalChannel } from "./internal-channel.js";

export interface SubagentLimits {
  /** Live children one parent may have at once (MONIRO_SUBAGENTS_MAX_LIVE). */
  maxLive: number;
  /** Step limit of a child when the parent gives none. */
  defaultMaxSteps: number;
  /** How often a `wait: true` call looks for the report in the parent's inbox. */
  waitPollMs: number;
}

// 50 ms: a waiting call reads the parent's inbox 20 times a second, not 200, for as long as the child works.
export const DEFAULT_SUBAGENT_LIMITS: SubagentLimits = { maxLive: 8, defaultMaxSteps: 20, waitPollMs: 50 };

const SHORT_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** 8 random lower-case letters and digits: a child's id after `<parent>--`. */
export function shortId(): string {
  return [...randomBytes(8)].map((byte) => SHORT_ID_ALPHABET[byte % SHORT_ID_ALPHABET.length]).join("");
}

/**
 * The runner's side of the tool bus: `subagent` (spawn) and `message` to
 * `agent:<parent|child>` (the internal channel) are run here, where the
 * agents are; every other call goes on to the tool-executor.
 */
export class SubagentToolBus implements ToolBus {
  constructor(
    private readonly inner: ToolBus,
    private readonly deps: {
      directory: AgentDirectory & { adopt(definition: ChildDefinition): void };
      records: ChildRecords;
      channel: InternalChannel;
      inbox: Inbox;
      events: EventSink;
      clock: Clock;
      limits: SubagentLimits;
    },
  ) {}

  async call(call: ToolCallEnvelope, options: { signal?: AbortSignal } = {}): Promise<ToolResultEnvelope> {
    if (call.tool === SUBAGENT_TOOL) return this.spawn(call, options.signal);
    if (call.tool === "message") {
      const to = typeof call.input.to === "string" ? call.input.to : call.replyTo;
      if (to?.startsWith("agent:")) return this.internalMessage(call, to.slice("agent:".length));
      const parent = parentOfChild(call.agent);
      if (parent !== undefined) {
        return this.refuse(
          call,
          "unserved-recipient",
          `A sub-agent speaks only to its parent: send to 'agent:${parent}' (or end your turn: your last text is your report). Nothing was sent.`,
        );
      }
    }
    return this.inner.call(call, options);
  }

  private result(call: ToolCallEnvelope, content: string, extra: Partial<ToolResultEnvelope> = {}): ToolResultEnvelope {
    return {
      ...stamp(this.deps.clock.now()),
      callId: call.callId,
      agent: call.agent,
      tool: call.tool,
      content,
      isError: false,
      ...extra,
    };
  }

  private refuse(call: ToolCallEnvelope, errorCode: string, content: string): ToolResultEnvelope {
    return this.result(call, content, { isError: true, errorCode });
  }

  private async spawn(call: ToolCallEnvelope, signal: AbortSignal | undefined): Promise<ToolResultEnvelope> {
    const parent = call.agent;
    if (isChildName(parent)) {
      return this.refuse(
        call,
        "subagent-depth",
        "Sub-agents cannot start sub-agents (depth is 1). Do the work with your own read-only tools and report back.",
      );
    }
    const definition = this.deps.directory.get(parent);
    if (!definition?.settings.tools.some((tool) => tool.name === SUBAGENT_TOOL)) {
      return this.refuse(
        call,
        "tool-not-allowed",
        `Tool 'subagent' is not in agent '${parent}''s tool policy: add it with 'tools: { allow: [subagent] }' in ${parent}.yaml.`,
      );
    }
    const input = subagentInputSchema.safeParse(call.input);
    if (!input.success) {
      const issues = input.error.issues.map((issue) => `${issue.path.join(".") || "(input)"}: ${issue.message}`);
      return this.refuse(call, "invalid-input", `Invalid subagent input: ${issues.join("; ")}. Fix it and call again.`);
    }
    const { limits } = this.deps;
    const live = await this.deps.records.liveCount(parent);
    if (live >= limits.maxLive) {
      return this.refuse(
        call,
        "subagent-limit",
        `Not started: you already have ${live} live sub-agents, the limit (MONIRO_SUBAGENTS_MAX_LIVE) is ${limits.maxLive}. Wait for a report first.`,
      );
    }
    let child: string;
    try {
      child = childNameOf(parent, shortId());
    } catch (error) {
      return this.refuse(call, "subagent-name", (error as Error).message);
    }
    const wait = input.data.wait ?? false;
    const now = this.deps.clock.now();
    const childDefinition: ChildDefinition = {
      name: child,
      parent,
      callId: call.callId,
      model: input.data.model ?? definition.settings.model,
      maxSteps: input.data.max_steps ?? limits.defaultMaxSteps,
      wait,
      createdAt: now,
      context: call.context,
    };
    await this.deps.records.create(childDefinition);
    this.deps.directory.adopt(childDefinition);
    await this.deps.channel.send({
      from: parent,
      to: child,
      text: input.data.task,
      meta: { kind: "task", parent, child, callId: call.callId, wait },
      now,
    });
    this.deps.events.emit(parent, "subagent-spawned", { child, callId: call.callId, wait });
    if (!wait) {
      return this.result(
        call,
        `Started sub-agent ${child}. Its report will arrive as an [agent:${child}] input; end your turn if you have nothing else to do.`,
        { data: { child, status: "started" } },
      );
    }
    return this.awaitReport(call, child, signal);
  }

  /**
   * `wait: true`: the report is delivered to the parent's inbox like any other
   * (so it survives this runner dying); this call returns it as its result,
   * naming its envelope (`delivers`) and leaving it in the inbox. The loop
   * writes the result and records the envelope as delivered in one write;
   * its checkpoint then acknowledges the report without injecting it. A
   * runner that dies before that write leaves the report in the inbox: the
   * takeover marks this call interrupted and injects the report as an input.
   */
  private async awaitReport(
    call: ToolCallEnvelope,
    child: string,
    signal: AbortSignal | undefined,
  ): Promise<ToolResultEnvelope> {
    const parent = call.agent;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const items = await this.deps.inbox.pending(parent);
      const report = items.find((item) => {
        const meta = subagentMetaOf(item.envelope.meta);
        return meta?.kind === "report" && meta.child === child;
      });
      if (report) {
        return this.result(call, `[agent:${child}] ${report.envelope.text}`, {
          data: { child, status: "reported", reportId: report.envelope.id },
          delivers: report.envelope.id,
        });
      }
      const record = await this.deps.records.get(child);
      if (!record || record.status === "canceled") {
        return this.refuse(call, "subagent-canceled", `Sub-agent ${child} was canceled before it reported.`);
      }
      await sleep(this.deps.limits.waitPollMs, undefined, signal ? { signal } : {}).catch((error: unknown) => {
        throw signal?.aborted ? signal.reason : error;
      });
    }
  }

  /** `message` to `agent:<x>`: only between a child and its parent, over the internal channel. */
  private async internalMessage(call: ToolCallEnvelope, target: string): Promise<ToolResultEnvelope> {
    const sender = call.agent;
    const text = typeof call.input.text === "string" ? call.input.text : "";
    if (text.length === 0) return this.refuse(call, "invalid-input", "Invalid message input: text: must not be empty.");
    const senderParent = parentOfChild(sender);
    let link: { parent: string; child: string } | undefined;
    if (senderParent !== undefined && senderParent === target) link = { parent: target, child: sender };
    else if (parentOfChild(target) === sender) link = { parent: sender, child: target };
    const record = link ? await this.deps.records.get(link.child) : undefined;
    if (!link || !record || record.status === "canceled" || record.status === "ended") {
      return this.refuse(
        call,
        "unserved-recipient",
        `Cannot send to 'agent:${target}': 'agent:' reaches only a live sub-agent from its parent, or the parent from its sub-agent (names '<parent>${CHILD_SEPARATOR}<id>'). Nothing was sent.`,
      );
    }
    const id = await this.deps.channel.send({
      from: sender,
      to: target,
      text,
      meta: { kind: "message", ...link, callId: record.definition.callId },
      now: this.deps.clock.now(),
    });
    return this.result(call, `Sent to agent:${target} (id ${id}).`, {
      data: { success: true, messageId: id, to: `agent:${target}` },
    });
  }
}
