import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

export const DEMO_AGENT = "alice";

/** First line of a definition the demo wrote; such a file is rewritten to follow ANTHROPIC_API_KEY. */
export const DEMO_MARKER = "# written by 'moniro demo'; delete this line to keep your own changes";

/** Alice's definition: the Anthropic backend when a key is set, else the in-process mock model. */
export function demoAgentYaml(env: Record<string, string | undefined>): string {
  const anthropic = Boolean(env.ANTHROPIC_API_KEY);
  return [
    DEMO_MARKER,
    `name: ${DEMO_AGENT}`,
    `model: ${anthropic ? "claude-sonnet-4-5" : "mock"}`,
    `backend: ${anthropic ? "anthropic" : "mock"}`,
    "prompt:",
    "  system: >-",
    "    You are Alice, a friendly assistant with a small workspace of files.",
    "    Look before you answer, and answer people with the message tool.",
    "",
  ].join("\n");
}

const WORKSPACE_FILES: Record<string, string> = {
  "notes.md": "# Notes\n\n- The demo stack runs five services over NATS and Redis.\n- Water the plants on Friday.\n",
  "shopping.txt": "milk\ncoffee\nbasil\n",
};

export interface PreparedAgent {
  yamlFile: string;
  /** "defined": written now; "kept": the user's own file, left alone. */
  action: "defined" | "kept";
  /** The backend the definition names (`anthropic` when it names none). */
  backend: string;
  workspace: string;
  files: string[];
}

function backendOf(yamlFile: string): string {
  try {
    const parsed = parse(readFileSync(yamlFile, "utf8")) as { backend?: unknown } | null;
    return typeof parsed?.backend === "string" ? parsed.backend : "anthropic";
  } catch {
    return "unreadable";
  }
}

/**
 * Defines alice in `agentsDir` — unless `alice.yaml` there is the user's own
 * (no demo marker): then it is kept — and puts a couple of files in her
 * workspace (existing files are left alone).
 */
export function prepareDemoAgent(
  agentsDir: string,
  workspacesDir: string,
  env: Record<string, string | undefined>,
): PreparedAgent {
  const yamlFile = join(agentsDir, `${DEMO_AGENT}.yaml`);
  const ours = !existsSync(yamlFile) || readFileSync(yamlFile, "utf8").startsWith(DEMO_MARKER);
  if (ours) {
    mkdirSync(agentsDir, { recursive: true });
    writeFileSync(yamlFile, demoAgentYaml(env));
  }
  const workspace = join(workspacesDir, DEMO_AGENT);
  mkdirSync(workspace, { recursive: true });
  for (const [name, content] of Object.entries(WORKSPACE_FILES)) {
    const file = join(workspace, name);
    if (!existsSync(file)) writeFileSync(file, content);
  }
  return {
    yamlFile,
    action: ours ? "defined" : "kept",
    backend: backendOf(yamlFile),
    workspace,
    files: Object.keys(WORKSPACE_FILES),
  };
}
