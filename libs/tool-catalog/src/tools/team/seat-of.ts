import type { ChannelEntry } from "@moniro/envelopes";
import type { TeamPlace, TeamPort, TeamSeat, ToolContext } from "../../tool.js";

/** The seat and port runTool checked before a team tool runs (a team tool never runs without them). */
export function seatOf(ctx: ToolContext): { seat: TeamSeat; team: TeamPort } {
  if (ctx.seat === undefined || ctx.team === undefined) {
    throw new Error("a team tool ran without a checked workspace seat (call it through runTool)");
  }
  return { seat: ctx.seat, team: ctx.team };
}

/** The place runTool gave a tool that checks its seat itself (`checksSeat`). */
export function placeGiven(ctx: ToolContext): { place: TeamPlace; team: TeamPort } {
  if (ctx.place === undefined || ctx.team === undefined) {
    throw new Error("a team tool ran without its workspace place (call it through runTool)");
  }
  return { place: ctx.place, team: ctx.team };
}

/** One channel entry as the model reads it. */
export function entryLine(entry: ChannelEntry): string {
  return `[${entry.id}] ${entry.from}: ${entry.text}`;
}
