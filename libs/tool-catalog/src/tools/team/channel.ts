import { channelCursorSchema } from "@moniro/envelopes";
import { DEFAULT_READ_LIMIT, MAX_READ_LIMIT, postToChannel } from "@moniro/store";
import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";
import { entryLine, placeGiven, seatOf } from "./seat-of.js";

export const channelSendTool = defineTool({
  name: "channel_send",
  description:
    "Post to this workspace's channel. Each @name of a member in the text wakes that member; a post without a mention wakes nobody (members see it next time they work here).",
  input: z.object({ text: z.string().min(1).describe("The post; @name mentions notify those members") }),
  usesWorkspace: false,
  team: true,
  // One script checks the membership, stores the post and names the mentioned members' agents;
  // their inputs go out right behind it (the wake path of an @mention, issue 14).
  checksSeat: true,
  async run(input, ctx) {
    const { place, team } = placeGiven(ctx);
    const result = await postToChannel(
      { publish: (envelope) => team.publishInbound(envelope) },
      { instance: place.instance, workflow: place.workflow, tag: place.tag },
      { agent: place.agent, text: input.text },
    );
    const instance = `${place.workflow}:${place.tag}`;
    const unreached = result.unreached.map((name) => ({ name, reason: `not a member of ${instance}` }));
    const parts = [`Posted to ${instance} (id ${result.id}).`];
    parts.push(result.mentions.length > 0 ? `Notified: ${result.mentions.join(", ")}.` : "Nobody was notified.");
    if (unreached.length > 0) {
      parts.push(
        `Not reached: ${result.unreached.join(", ")} (not members of ${instance}; see team_members). The post is kept.`,
      );
    }
    return ok({ postId: result.id, notified: result.mentions, unreached }, parts.join(" "));
  },
});

export const channelReadTool = defineTool({
  name: "channel_read",
  description:
    "Read this workspace's channel: the posts after a cursor (oldest first), or the last N. Marks what you read as seen.",
  input: z.object({
    after: channelCursorSchema.optional().describe("A post id from a previous read: the posts after it"),
    last: z.number().int().min(1).max(MAX_READ_LIMIT).optional().describe(`The last N posts`),
  }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    if (input.after !== undefined && input.last !== undefined) {
      return fail(
        "invalid-input",
        "Pass 'after' or 'last', not both: 'after' reads on from a cursor, 'last' the newest N.",
      );
    }
    const { seat } = seatOf(ctx);
    const { channel } = seat.instance;
    const page =
      input.last !== undefined
        ? await channel.last(input.last)
        : await channel.read({ after: input.after, limit: DEFAULT_READ_LIMIT });
    if (page.cursor !== undefined && page.entries.length > 0) await channel.markSeen(seat.member.name, page.cursor);
    const data = { entries: page.entries, cursor: page.cursor };
    if (page.entries.length === 0) return ok(data, "No posts.");
    const more =
      input.last === undefined && page.entries.length === DEFAULT_READ_LIMIT
        ? `\n(more may follow: channel_read {after: '${page.cursor}'})`
        : "";
    return ok(data, `${page.entries.map(entryLine).join("\n")}${more}`);
  },
});
