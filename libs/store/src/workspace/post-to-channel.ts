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
 * `unreached`.
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
  await Promise.all(
    delivery.notify.map(({ agent }) =>
      deps.publish({
        ...stamp(now()),
        agent,
        source,
        context,
        priority: "immediate",
        replyTo: source,
        text,
        attachments: [],
        meta: { channelEntry: result.id, from: delivery.from },
      }),
    ),
  );
  return result;
}
