import { definitionOf } from "@moniro/registry";
import { type HookCatalog, hooksOf } from "../hooks/hook-catalog.js";
import type { AgentCatalog, GatewayLogger } from "../ports.js";
import type { RegistryLink } from "./registry-link.js";

/** What the gateway answers for a deleted agent (404 `unknown_agent`). */
export function deletedMessage(name: string, removed: { revision: number; removedAt: string }): string {
  return `agent '${name}' was deleted at ${removed.removedAt} (last revision ${removed.revision}): it takes no new input; define it again (PUT /v1/agents/${name}/definition) to use it`;
}

/**
 * The agents of the live registry. A name the cache does not know costs one
 * KV read (a definition written elsewhere that the watch has not delivered yet).
 */
export function registryCatalog(link: RegistryLink): AgentCatalog {
  return {
    has: async (name) => (await (await link.get()).fetch(name)) !== undefined,
    names: () => link.current()?.names() ?? [],
    explainMissing: (name) => {
      const removed = link.current()?.removed(name);
      return removed ? deletedMessage(name, removed) : undefined;
    },
  };
}

type Env = Record<string, string | undefined>;

/**
 * Every agent's `webhooks:` from the live registry, with secrets resolved from
 * `env`. Rebuilt at the first request after a change (the watch says when); a
 * hook name defined twice or a missing secret is logged once and answers 503.
 */
export function registryHookCatalog(link: RegistryLink, options: { env: Env; logger: GatewayLogger }): HookCatalog {
  let built: ReturnType<typeof hooksOf> | undefined;
  let watching = false;
  let reported = "";
  return {
    async get(name) {
      const registry = await link.get();
      if (!watching) {
        watching = true;
        registry.onChange(() => {
          built = undefined;
        });
      }
      if (!built) {
        built = hooksOf(registry.list().map(definitionOf), options.env);
        const summary = JSON.stringify([[...built.hooks.keys()].sort(), built.problems, built.unauthenticated]);
        if (summary !== reported) {
          reported = summary;
          options.logger.info({ hooks: [...built.hooks.keys()].sort() }, "webhooks known to the gateway");
          for (const problem of built.problems) {
            options.logger.error({ problem }, "a webhook cannot be served; it answers 503");
          }
          for (const hook of built.unauthenticated) {
            options.logger.warn(
              { hook },
              "webhook with 'auth: none': anybody who can reach the gateway can post to it (an explicit opt-out of authentication)",
            );
          }
        }
      }
      return built.hooks.get(name);
    },
  };
}
