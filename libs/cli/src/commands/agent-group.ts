import { Command } from "commander";

/** The `agent` group: created by the first command file that needs it, found by the others. */
export function agentGroup(program: Command): Command {
  const found = program.commands.find((c) => c.name() === "agent");
  if (found) return found;
  const agent = new Command("agent").description("define, look at and manage agents and their memory, notes and todos");
  program.addCommand(agent);
  return agent;
}
