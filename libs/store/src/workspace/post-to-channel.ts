import { type InboundEnvelope, stamp } from "@moniro/envelopes";
import type { PostInput, PostResult, Workspace } from "./workspace-port.js";

/** The source (and reply target) of everything a workspace pushes to its members: `ws:<workflow>:<tag>`. */
export const workspaceSource = (workflow: string, tag: string): string => `ws:${workflow}:${tag}`;

/** The context a workspace's work runs in: `<workflow>:<tag>`. */
export const workspaceContext = (workflow: string, tag: string): string => `${workflow}:${tag}`;

export interface ChannelPostDeps {
  /** Publishes an inbound envelope on `<ns>.in.<agent>` and resolves once it is durable (JetStream ack). */
  publish(envelope: InboundEnvelope): Promise<void>;
  now?: () => number;
  /** Pauses between the tries of a mention whose publish failed (default 250 ms, then 1 s). */
  retryDelaysMs?: readonly number[];
}

const RETRY_DELAYS_MS = [250, 1_000] as const;

/**
 * The post is stored, but waking some mentioned members failed (NATS did not store their
 * inputs, after retries): the caller must not post it again (it would be there twice).
 */
export class MentionsNotDeliveredError extends Error {
  override readonly name = "MentionsNotDeliveredError";
  constructor(
    readonly post: PostResult,
    readonly missed: ReadonlyArray<{ member: string; error: string }>,
  ) {
    super(
      `the post is stored as ${post.id} (do not post it again), but waking ${missed
        .map((one) => `@${one.member}`)
        .join(
          ", ",
        )} failed: ${missed[0]?.error ?? "unknown"}; they see the post as unread when they next work in this workspace`,
    );
  }
}

/**
 * The one way anything posts to a workspace channel (the `channel_send` tool,
 * the kickoff, people over HTTP): the post is stored first, then each
 * @mentioned member gets an `immediate` input from `ws:<workflow>:<tag>` in
 * context `<workflow>:<tag>`, its text `<from>: <text>`. The input goes to
 * the member's agent (an inline member `helper` is the agent
 * `<workflow>__<tag>__helper`), named by the same script that stores the
 * post, so the inputs go out as soon as the post is stored (one Redis round
 * trip, then the JetStream publishes; resolves once every one is acked). A
 * post without a mention wakes nobody. Mentions of non-members come back in
 * `unreached`. A mention whose input NATS did not store is tried twice more;
 * still failing, MentionsNotDeliveredError says the post is stored (so the
 * caller does not post it twice) and whom it did not wake.
 *
 * `{ agent, text }` posts as the member that agent plays: the membership is
 * checked in the same script as the post (a tool call's seat), refused with
 * `not_a_member` naming the agent.
 */
export async function postToChannel(
  deps: ChannelPostDeps,
  workspace: { instance: Workspace; workflow: string; tag: string },
  post: PostInput,
): Promise<PostResult> {
  const delivery = await workspace.instance.channel.deliver(post);
  const result = delivery.post;
  if (delivery.notify.length === 0) return result;
  const now = deps.now ?? Date.now;
  const source = workspaceSource(workspace.workflow, workspace.tag);
  const context = workspaceContext(workspace.workflow, workspace.tag);
  const text = `${delivery.from}: ${post.text}`;
  const inputs = delivery.notify.map(({ member, agent }) => ({
    member,
    envelope: {
      ...stamp(now()),
      agent,
      source,
      context,
      priority: "immediate" as const,
      replyTo: source,
      text,
      attachments: [],
      meta: { channelEntry: result.id, from: delivery.from },
    },
  }));
  // A failed input is published again, the same envelope: its id makes a try that was stored after all count once.
  let waiting = inputs;
  let failures: string[] = [];
  for (const delay of [0, ...(deps.retryDelaysMs ?? RETRY_DELAYS_MS)]) {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const outcomes = await Promise.allSettled(waiting.map((input) => deps.publish(input.envelope)));
    failures = outcomes.flatMap((outcome) =>
      outcome.status === "rejected" ? [(outcome.reason as Error)?.message ?? String(outcome.reason)] : [],
    );
    waiting = waiting.filter((_, index) => outcomes[index]?.status === "rejected");
    if (waiting.length === 0) return result;
  }
  throw new MentionsNotDeliveredError(
    result,
    waiting.map((input, index) => ({ member: input.member, error: failures[index] ?? "unknown" })),
  );
}
