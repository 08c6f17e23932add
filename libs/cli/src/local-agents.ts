import { existsSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { stringify } from "yaml";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** The agents directory of the current project: $MONIRO_AGENTS_DIR, else ./.agents (as `moniro up` uses it). */
export function agentsDirOf(env: Record<string, string | undefined> = process.env): string {
  return resolve(env.MONIRO_AGENTS_DIR || ".agents");
}

/**
 * The current project's moniro.yaml (or moniro.yml), in $MONIRO_PROJECT_DIR,
 * else the current directory (as `moniro up` points the gateway at it).
 */
export function projectFileOf(env: Record<string, string | undefined> = process.env): string | undefined {
  const root = resolve(env.MONIRO_PROJECT_DIR || ".");
  return ["moniro.yaml", "moniro.yml"].map((name) => join(root, name)).find((file) => existsSync(file));
}

/** Whether the gateway's URL is on this machine. */
export function isLocalGateway(baseUrl: string): boolean {
  try {
    return LOOPBACK.has(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}

/**
 * Whether `agent create` defines the agent as a file of the agents directory
 * (docs/cli.md "agent create"): `--local` / `--no-local` decide; otherwise
 * when the gateway is on this machine, the agents directory exists and the
 * project has no moniro.yaml (which lists the agent files the gateway syncs).
 */
export function createsLocally(
  local: boolean | undefined,
  baseUrl: string,
  agentsDir: string,
  projectFile?: string,
): boolean {
  if (local !== undefined) return local;
  if (projectFile !== undefined) return false;
  return isLocalGateway(baseUrl) && existsSync(agentsDir) && statSync(agentsDir).isDirectory();
}

/** The agents directory as the user would type it (relative to the cwd when inside it). */
export function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") ? rel : path;
}

/** Writes `<dir>/<name>.yaml` with the definition (refusing to overwrite); returns its path. */
export async function writeAgentFile(dir: string, name: string, definition: Record<string, unknown>): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, stringify({ name, ...definition }), { flag: "wx" });
  return file;
}
