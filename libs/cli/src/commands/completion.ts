import { Argument, type Command } from "commander";
import { bashCompletion, zshCompletion } from "../completion.js";

/** `moniro completion bash|zsh`: prints a completion script generated from the command tree. */
export function register(program: Command): void {
  program
    .command("completion")
    .description("print a shell completion script: source <(moniro completion bash)")
    .addArgument(new Argument("<shell>", "bash or zsh").choices(["bash", "zsh"]))
    .action((shell: "bash" | "zsh") => {
      process.stdout.write(shell === "bash" ? bashCompletion(program) : zshCompletion(program));
    });
}
