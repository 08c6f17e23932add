import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { COMMANDS } from "./commands/index.js";

/** This package's version (libs/cli/package.json; this file is libs/cli/{src,dist}/program.*). */
export const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { version: string }
).version;

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

/**
 * The `moniro` command tree. Usage errors throw (CommanderError) instead of
 * exiting, so main.ts maps them to exit code 2; every command's name is known
 * to the error reporter through `onAction`.
 */
export function buildProgram(onAction: (commandPath: string) => void = () => undefined): Command {
  const program = new Command()
    .name("moniro")
    .description("Moniro: a distributed runtime for persistent LLM agents")
    .version(VERSION, "-V, --version", "print the version")
    .showHelpAfterError();
  for (const register of COMMANDS) register(program);
  for (const command of everyCommand(program)) {
    command.exitOverride();
    command.showHelpAfterError();
  }
  program.hook("preAction", (_program, action) => {
    const names: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) names.unshift(c.name());
    onAction(names.join(" "));
  });
  return program;
}
