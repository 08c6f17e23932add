import { CliError } from "./cli-errors.js";
import { EXIT } from "./exit-codes.js";

/**
 * The words after `<agent>` of `agent memory|notes|todo <agent> [action …]`
 * (seed 004 puts the action after the agent, which commander's subcommands
 * cannot parse): checks the action and its argument count, naming the usage.
 */
export function actionOf(
  command: string,
  words: readonly string[],
  actions: Record<string, { args: readonly string[]; variadicLast?: boolean }>,
): { action: string | undefined; args: string[] } {
  const [action, ...args] = words;
  if (action === undefined) return { action: undefined, args: [] };
  const spec = actions[action];
  const usage = Object.entries(actions)
    .map(([name, s]) => `${command} <agent> ${[name, ...s.args.map((a) => `<${a}>`)].join(" ")}`)
    .join(" | ");
  if (!spec) throw new CliError(`unknown action '${action}': use ${usage}`, EXIT.usage);
  const joined =
    spec.variadicLast && args.length > spec.args.length
      ? [...args.slice(0, spec.args.length - 1), args.slice(spec.args.length - 1).join(" ")]
      : args;
  if (joined.length !== spec.args.length) {
    throw new CliError(
      `${action} takes ${spec.args.map((a) => `<${a}>`).join(" ")}: ${command} <agent> ${[action, ...spec.args.map((a) => `<${a}>`)].join(" ")}`,
      EXIT.usage,
    );
  }
  return { action, args: joined };
}
