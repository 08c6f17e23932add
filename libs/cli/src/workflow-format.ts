import type { WorkflowInstanceView } from "@moniro/api";
import { InvalidArgumentError } from "commander";
import { table } from "./output.js";

/** `--var name=value`, repeatable: the workflow's variables. */
export function collectVariable(text: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = text.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError(`'${text}' must be name=value (e.g. --var pr=123)`);
  return { ...previous, [text.slice(0, at)]: text.slice(at + 1) };
}

/** One line per member: `name (agent, kind, role)`. */
export function formatMembers(instance: Pick<WorkflowInstanceView, "members">): string {
  return instance.members
    .map(
      (member) =>
        `  @${member.name}${member.agent !== member.name ? ` (${member.agent})` : ""}  ${member.kind}${member.role ? `, ${member.role}` : ""}`,
    )
    .join("\n");
}

/** `moniro ps`: one row per instance. */
export function formatInstances(instances: readonly WorkflowInstanceView[]): string {
  if (instances.length === 0) return "no workflow instances (start one with: moniro start <workflow>)";
  return table([
    ["INSTANCE", "STATUS", "MEMBERS", "STARTED"],
    ...instances.map((instance) => [
      instance.instance,
      instance.status,
      instance.members.map((member) => member.name).join(","),
      new Date(instance.startedAt).toISOString(),
    ]),
  ]);
}
