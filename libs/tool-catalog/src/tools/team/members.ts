import { z } from "zod";
import { defineTool, ok } from "../../tool.js";
import { seatOf } from "./seat-of.js";

export const teamMembersTool = defineTool({
  name: "team_members",
  description: "The members of this workspace: the name to @mention, their role, and whether they are working now.",
  input: z.object({}).strict(),
  usesWorkspace: false,
  team: true,
  async run(_input, ctx) {
    const { seat, team } = seatOf(ctx);
    const members = await seat.instance.members();
    const rows = await Promise.all(
      members.map(async (member) => ({
        name: member.name,
        agent: member.agent,
        kind: member.kind,
        ...(member.role === undefined ? {} : { role: member.role }),
        // An agent without a state record has never run: it is idle.
        state: (await team.agentState(member.agent)) ?? "idle",
        you: member.name === seat.member.name,
      })),
    );
    const lines = rows.map((row) => `@${row.name}${row.you ? " (you)" : ""}: ${row.role ?? "no role"}; ${row.state}`);
    return ok({ members: rows }, lines.join("\n"));
  },
});
