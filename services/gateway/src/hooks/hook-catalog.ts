import {
  type AgentDefinition,
  type CompiledTemplate,
  compileTemplate,
  DEFAULT_MAX_CHARS,
  DEFAULT_TOLERANCE_S,
  displayPath,
} from "@moniro/config";
import type { Lane } from "@moniro/envelopes";

/** How one hook authenticates, with its secret read from the environment. */
export type HookAuth =
  | { kind: "github"; secret: string }
  | { kind: "hmac"; secret: string; toleranceS: number }
  | { kind: "bearer"; token: string }
  | { kind: "none" };

/** A hook ready to serve: where it delivers and how its callers prove who they are. */
export interface Hook {
  name: string;
  agent: string;
  priority: Lane;
  template?: CompiledTemplate;
  maxChars: number;
  auth: HookAuth;
}

/** A hook that is defined but cannot be served (its secret is missing); the log says why. */
export interface BrokenHook {
  name: string;
  agent: string;
  problem: string;
}

export interface HookCatalog {
  /** The hook of that name, a broken one, or undefined when no agent defines it. */
  get(name: string): Promise<Hook | BrokenHook | undefined>;
}

export function isBroken(hook: Hook | BrokenHook): hook is BrokenHook {
  return "problem" in hook;
}

/** A catalog over fixed hooks (tests, benchmarks). */
export function staticHookCatalog(hooks: readonly (Hook | BrokenHook)[]): HookCatalog {
  const byName = new Map(hooks.map((hook) => [hook.name, hook]));
  return { get: async (name) => byName.get(name) };
}

type Env = Record<string, string | undefined>;

function secretOf(env: Env, variable: string, where: string): string | { problem: string } {
  const value = env[variable];
  if (value === undefined || value.length === 0) {
    return {
      problem: `${where}: environment variable ${variable} is not set in the gateway's environment: set it (docs/webhooks.md: docker-compose override, Helm webhooks.secrets, or the moniro-webhooks Secret) or change the hook's ${where.endsWith("token_env") ? "token_env" : "secret_env"}`,
    };
  }
  if (value.length < 16) {
    return {
      problem: `${where}: environment variable ${variable} holds fewer than 16 characters: use a long random secret`,
    };
  }
  return value;
}

/** The hooks an agent list defines, keyed by hook name, with secrets resolved from `env` (problems named by file and field). */
export function hooksOf(
  definitions: Iterable<Pick<AgentDefinition, "name" | "file" | "webhooks">>,
  env: Env,
): { hooks: Map<string, Hook | BrokenHook>; problems: string[]; unauthenticated: string[] } {
  const next = new Map<string, Hook | BrokenHook>();
  const files = new Map<string, string>();
  const problems: string[] = [];
  const unauthenticated: string[] = [];
  for (const definition of definitions) {
    for (const [name, hook] of Object.entries(definition.webhooks ?? {})) {
      const where = `${displayPath(definition.file)}: webhooks.${name}`;
      const other = files.get(name);
      if (other !== undefined) {
        const problem = `${where}: hook '${name}' is also defined in ${other}: hook names are global, rename one of them`;
        problems.push(problem);
        next.set(name, { name, agent: definition.name, problem });
        continue;
      }
      files.set(name, displayPath(definition.file));
      const base = {
        name,
        agent: definition.name,
        priority: hook.priority ?? "background",
        maxChars: hook.max_chars ?? DEFAULT_MAX_CHARS,
        ...(hook.template !== undefined ? { template: compileTemplate(hook.template) } : {}),
      } as const;
      if (hook.auth === "none") {
        unauthenticated.push(name);
        next.set(name, { ...base, auth: { kind: "none" } });
        continue;
      }
      const variable = hook.auth === "bearer" ? hook.token_env : hook.secret_env;
      const field = hook.auth === "bearer" ? "token_env" : "secret_env";
      const secret = secretOf(env, variable ?? "", `${where}.${field}`);
      if (typeof secret !== "string") {
        problems.push(secret.problem);
        next.set(name, { name, agent: definition.name, problem: secret.problem });
        continue;
      }
      const auth: HookAuth =
        hook.auth === "bearer"
          ? { kind: "bearer", token: secret }
          : hook.auth === "github"
            ? { kind: "github", secret }
            : { kind: "hmac", secret, toleranceS: hook.tolerance_s ?? DEFAULT_TOLERANCE_S };
      next.set(name, { ...base, auth });
    }
  }
  return { hooks: next, problems, unauthenticated };
}
