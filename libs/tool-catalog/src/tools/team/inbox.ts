import { channelCursorSchema } from "@moniro/envelopes";
import { z } from "zod";
import { defineTool, fail, ok } from "../../tool.js";
import { entryLine, seatOf } from "./seat-of.js";

export const inboxTool = defineTool({
  name: "inbox",
  description: "Your unread @mentions in this workspace's channel, oldest first. Acknowledge them with inbox_ack.",
  input: z.object({ limit: z.number().int().min(1).max(200).optional().describe("Default 50") }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    const { seat } = seatOf(ctx);
    const { entries, unread } = await seat.instance.channel.inbox(seat.member.name, input.limit ?? 50);
    if (entries.length === 0) return ok({ entries, unread }, "No unread mentions.");
    const more = unread > entries.length ? `\n(${unread} unread in all)` : "";
    return ok({ entries, unread }, `${entries.map(entryLine).join("\n")}${more}`);
  },
});

export const inboxAckTool = defineTool({
  name: "inbox_ack",
  description: "Mark @mentions as read: the given post ids, or every mention up to and including one post id.",
  input: z.object({
    ids: z.array(channelCursorSchema).min(1).max(200).optional().describe("Post ids from inbox"),
    upTo: channelCursorSchema.optional().describe("Every mention up to this post id"),
  }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    if ((input.ids === undefined) === (input.upTo === undefined)) {
      return fail(
        "invalid-input",
        "Pass either 'ids' (post ids from inbox) or 'upTo' (one post id: every mention up to it), exactly one of them.",
      );
    }
    const { seat } = seatOf(ctx);
    const { channel } = seat.instance;
    const acked =
      input.upTo !== undefined
        ? await channel.ackUpTo(seat.member.name, input.upTo)
        : await channel.ack(seat.member.name, input.ids ?? []);
    return ok({ acked }, acked === 1 ? "1 mention marked read." : `${acked} mentions marked read.`);
  },
});
