import { type InboundEnvelope, stamp } from "@moniro/envelopes";
import type { PostResult, Workspace } from "./workspace-port.js";

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
 * context `<workflow>:<tag>`, its text `<from>: <text>`. A post without a
 * mention wakes nobody. Mentions of non-members come back in `unreached`.
 */
export async function postToChannel(
  deps: ChannelPostDeps,
  workspace: { instance: Workspace; workflow: string; tag: string },
  post: { from: string; text: string },
): Promise<PostResult> {
  const result = await workspace.instance.channel.post(post);
  const now = deps.now ?? Date.now;
  const source = workspaceSource(workspace.workflow, workspace.tag);
  // A member's name is what others @mention; the agent doing the work differs for inline agents
  // (`<workflow>__<tag>__<key>`), so the input goes to the member's agent.
  const members = result.mentions.length > 0 ? await workspace.instance.members() : [];
  const agentOf = new Map(members.map((member) => [member.name, member.agent]));
  await Promise.all(
    result.mentions.map((member) =>
      deps.publish({
        ...stamp(now()),
        agent: agentOf.get(member) ?? member,
        source,
        context: workspaceContext(workspace.workflow, workspace.tag),
        priority: "immediate",
        replyTo: source,
        text: `${post.from}: ${post.text}`,
        attachments: [],
        meta: { channelEntry: result.id, from: post.from },
      }),
    ),
  );
  return result;
}
