import { type Stats, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { AgentDefinitionError, loadAgentDefinition } from "@moniro/config";
import { isChildName } from "@moniro/envelopes";
import { type ResolvedPolicy, resolvePolicy } from "@moniro/tool-catalog";

/** Every sub-agent (`<parent>--<id>`, a name no definition can take) has the read-only set, whatever it asks. */
export const CHILD_LOOKUP: AgentPolicyLookup = {
  ok: true,
  policy: resolvePolicy({ profile: "readonly", subagent: true }),
};

/** What the executor knows about one agent when a call arrives. */
export type AgentPolicyLookup =
  | { ok: true; policy: ResolvedPolicy }
  | { ok: false; errorCode: "unknown-agent" | "invalid-agent-definition"; message: string };

export interface AgentPolicies {
  lookup(agent: string): Promise<AgentPolicyLookup>;
}

/** Missing or unreadable (permissions, a file where a directory should be): no definition there. */
function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

interface Cached {
  /** The files the agent's definition may be in, in order (built once per agent). */
  candidates: readonly string[];
  mtimeMs: number;
  lookup: AgentPolicyLookup;
}

/**
 * Tool policies from `<agentsDir>/<agent>.yaml` (`.yml` too), read on first
 * use and again whenever the file changes (a stat per call, no restart
 * needed). A missing file is an unknown agent; an invalid one is reported
 * with the definition's own error (file, field, fix).
 *
 * The stat is synchronous on purpose: on a local directory it takes a few
 * microseconds, while the promise form hands it to libuv's thread pool and
 * back (thread wakeups and an eventfd write per call), which cost the
 * executor more CPU per call than the tool itself. Only reading a changed
 * file is asynchronous.
 */
export function agentPoliciesFromDirectory(agentsDir: string): AgentPolicies {
  const root = resolve(agentsDir);
  const cache = new Map<string, Cached>();

  const candidatesOf = (agent: string) => [join(root, `${agent}.yaml`), join(root, `${agent}.yml`)];

  function fileOf(candidates: readonly string[]): { file: string; mtimeMs: number } | undefined {
    for (const file of candidates) {
      const info = statOrUndefined(file);
      if (info?.isFile()) return { file, mtimeMs: info.mtimeMs };
    }
    return undefined;
  }

  return {
    async lookup(agent) {
      if (isChildName(agent)) return CHILD_LOOKUP;
      const cached = cache.get(agent);
      const candidates = cached?.candidates ?? candidatesOf(agent);
      const found = fileOf(candidates);
      if (!found) {
        cache.delete(agent);
        return {
          ok: false,
          errorCode: "unknown-agent",
          message: `Unknown agent '${agent}': there is no ${agent}.yaml in the tool executor's agents directory (${root}), so no tool policy applies and no tool runs. Define the agent there (MONIRO_AGENTS_DIR).`,
        };
      }
      if (cached && cached.mtimeMs === found.mtimeMs) return cached.lookup;
      let lookup: AgentPolicyLookup;
      try {
        const definition = await loadAgentDefinition(found.file);
        lookup = { ok: true, policy: resolvePolicy(definition.tools ?? {}) };
      } catch (error) {
        if (!(error instanceof AgentDefinitionError)) throw error;
        lookup = {
          ok: false,
          errorCode: "invalid-agent-definition",
          message: `The definition of agent '${agent}' is invalid, so no tool runs: ${error.message}`,
        };
      }
      cache.set(agent, { candidates, mtimeMs: found.mtimeMs, lookup });
      return lookup;
    },
  };
}
