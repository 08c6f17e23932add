import { isChildName, parentOfChild } from "@moniro/envelopes";
import type { ChildDefinition, ChildRecords } from "@moniro/store";
import type { AgentDirectory, RuntimeAgent } from "../runtime/agent-directory.js";
import { SUBAGENT_PROMPT } from "./child-prompt.js";
import { childSettings } from "./child-settings.js";

/** Children kept in memory per runner (a child lives minutes; a busy runner sees many). */
const CACHE_MAX = 2_000;

/**
 * The defined agents, and the sub-agents of any of them: a child has no
 * YAML, its record in Redis says what it is, so every runner can run it.
 * A child that ended or was canceled is no longer found.
 */
export function withChildren(
  base: AgentDirectory,
  records: ChildRecords,
): AgentDirectory & { forget(name: string): void; adopt(definition: ChildDefinition): void } {
  const children = new Map<string, RuntimeAgent>();
  const build = (definition: ChildDefinition, parent: RuntimeAgent): RuntimeAgent => ({
    name: definition.name,
    settings: childSettings(definition, SUBAGENT_PROMPT(definition.name, definition.parent), parent.settings),
    // Providers take the model per request: the child talks to its parent's backend.
    llm: parent.llm,
    parent: { name: definition.parent, callId: definition.callId },
  });
  const keep = (child: RuntimeAgent) => {
    if (children.size >= CACHE_MAX) children.delete(children.keys().next().value as string);
    children.set(child.name, child);
    return child;
  };
  return {
    get: (name) => base.get(name) ?? children.get(name),
    names: () => base.names(),
    ...(base.removedReason ? { removedReason: (name: string) => base.removedReason?.(name) } : {}),
    ...(base.onRemoved ? { onRemoved: base.onRemoved.bind(base) } : {}),
    explainMissing: (name) => {
      if (!isChildName(name)) return base.explainMissing(name);
      const parent = parentOfChild(name) ?? "";
      // A child runs only where its parent is defined: without it there is no model, backend or policy.
      if (!base.get(parent)) {
        return `sub-agent '${name}' is not run here: its parent '${parent}' is not a defined agent on this runner (${base.explainMissing(parent)})`;
      }
      return `sub-agent '${name}' does not exist or has ended (its report was delivered, or it was canceled)`;
    },
    forget: (name) => {
      children.delete(name);
    },
    /** A child spawned here is known at once (its task usually comes back to this runner). */
    adopt: (definition) => {
      const parent = base.get(definition.parent);
      if (parent) keep(build(definition, parent));
    },
    async load(name) {
      const known = base.get(name) ?? children.get(name);
      if (known) return known;
      // A defined agent this runner has not heard of yet (the registry's watch is behind): one read.
      if (!isChildName(name)) return base.load?.(name);
      const parent = base.get(parentOfChild(name) ?? "");
      // A child is run only where its parent is defined: no Redis read for any other.
      if (!parent) return undefined;
      const record = await records.get(name);
      if (!record || record.status === "canceled" || record.status === "ended") return undefined;
      return keep(build(record.definition, parent));
    },
  };
}
