import type { Command } from "commander";

/** The flags of `agent create` and `new` that make a definition. */
export interface DefinitionFlags {
  model?: string;
  system?: string;
  role?: string;
  expertise?: string;
  style?: string;
  backend?: string;
}

/** The definition fields the flags give (only those set): model, backend, prompt.system, soul. */
export function definitionFromFlags(flags: DefinitionFlags): Record<string, unknown> {
  const soul = {
    ...(flags.role !== undefined ? { role: flags.role } : {}),
    ...(flags.expertise !== undefined
      ? {
          expertise: flags.expertise
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
    ...(flags.style !== undefined ? { style: flags.style } : {}),
  };
  return {
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.backend !== undefined ? { backend: flags.backend } : {}),
    ...(flags.system !== undefined ? { prompt: { system: flags.system } } : {}),
    ...(Object.keys(soul).length > 0 ? { soul } : {}),
  };
}

/** Adds the definition flags shared by `agent create` and `new`. */
export function withDefinitionFlags(command: Command): Command {
  return command
    .option("-m, --model <model>", "model id, e.g. claude-sonnet-4-5 (required unless --from)")
    .option("--system <text>", "base system prompt (prompt.system)")
    .option("--role <text>", "soul.role, e.g. code-reviewer")
    .option("--expertise <list>", "soul.expertise, comma-separated, e.g. typescript,architecture")
    .option("--style <text>", "soul.style")
    .option("--backend <backend>", "anthropic (default) or mock")
    .option("--from <agent>", "copy this agent's definition; the other flags override its fields");
}
