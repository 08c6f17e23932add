import { resolve } from "node:path";
import { applyAgent, getAgentDefinition } from "@moniro/api";
import { type Client, GatewayUnreachableError, MoniroApiError } from "@moniro/client";
import type { Command } from "commander";
import type { AppliedFile } from "../apply-files.js";
import { CliError } from "../cli-errors.js";
import { EXIT } from "../exit-codes.js";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { type OutputFormat, print, withOutput } from "../output.js";

/** What `apply` did with one file. */
export interface ApplyOutcome {
  file: string;
  agent?: string;
  result: "created" | "configured" | "unchanged" | "failed";
  revision?: number;
  error?: string;
}

/** JSON with keys sorted at every level: two definitions compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

async function applyOne(client: Client, read: AppliedFile): Promise<ApplyOutcome> {
  // Loaded here: @moniro/config is most of the CLI's start-up cost, and only the writing commands need it.
  const { agentDefinitionSchema, displayPath } = await import("@moniro/config");
  const file = displayPath(read.file);
  if ("error" in read) return { file, ...(read.name ? { agent: read.name } : {}), result: "failed", error: read.error };
  const { name, definition } = read;
  try {
    const current = await client.call(getAgentDefinition, { params: { agent: name } }).catch((error: unknown) => {
      if (error instanceof MoniroApiError && error.status === 404) return undefined;
      throw error;
    });
    // The registry stores the definition as the schema gives it (defaults filled in): compare in that form.
    const normal = agentDefinitionSchema.parse({ ...definition, name });
    if (current && canonical(current.definition) === canonical(normal)) {
      return { file, agent: name, result: "unchanged", revision: current.revision };
    }
    const record = await client.call(applyAgent, { params: { agent: name }, body: { definition } });
    return { file, agent: name, result: current ? "configured" : "created", revision: record.revision };
  } catch (error) {
    if (error instanceof GatewayUnreachableError) throw error;
    if (error instanceof MoniroApiError) {
      const issues = (error.details?.issues ?? []) as Array<{ path: string; message: string }>;
      const detail =
        issues.length > 0 ? issues.map((i) => `${i.path}: ${i.message}`).join("; ") : `${error.code}: ${error.message}`;
      return { file, agent: name, result: "failed", error: `${file}: ${error.status} ${detail}` };
    }
    throw error;
  }
}

export function formatOutcome(outcome: ApplyOutcome): string {
  return outcome.result === "failed"
    ? `agent/${outcome.agent ?? "?"} failed: ${outcome.error}`
    : `agent/${outcome.agent} ${outcome.result} (revision ${outcome.revision})`;
}

/**
 * What `apply -f <path>` reads: with a moniro.yaml in the directory `<path>`,
 * the agents it registers (docs/cli.md); else the file, or every YAML file
 * of the directory.
 */
async function readsOf(
  path: string,
  applyFilesOf: (path: string) => Promise<string[]>,
  readApplyFile: (file: string) => Promise<AppliedFile>,
  applyProjectOf: (dir: string) => Promise<AppliedFile[] | undefined>,
): Promise<Array<() => Promise<AppliedFile>>> {
  const files = await applyFilesOf(path).catch((error: Error) => {
    throw new CliError(error.message, EXIT.usage);
  });
  const project = files.length === 1 && files[0] === resolve(path) ? undefined : await applyProjectOf(path);
  if (project !== undefined) {
    if (project.length === 0)
      throw new CliError(`${path}/moniro.yaml registers no agents (its 'agents' list)`, EXIT.usage);
    return project.map((read) => async () => read);
  }
  if (files.length === 0) throw new CliError(`${path} has no *.yaml or *.yml files`, EXIT.usage);
  return files.map((file) => () => readApplyFile(file));
}

/**
 * `moniro apply -f <file|dir>`: each YAML definition to
 * `PUT /v1/agents/<name>/definition` (kubectl apply), `prompt.system_file`
 * inlined. One line per agent; exit 1 when any failed.
 */
export function register(program: Command): void {
  withOutput(
    withGateway(
      program
        .command("apply")
        .description("create or update agents from YAML definitions (a file, or every *.yaml of a directory)")
        .requiredOption("-f, --file <path>", "a definition file, or a directory of them (e.g. .agents/)"),
    ),
  ).action(async (flags: GatewayFlags & { file: string; output?: OutputFormat }) => {
    const client = clientFor(flags);
    const { applyFilesOf, readApplyFile } = await import("../apply-files.js");
    const { applyProjectOf } = await import("../apply-project.js");
    const reads = await readsOf(flags.file, applyFilesOf, readApplyFile, applyProjectOf);
    const outcomes: ApplyOutcome[] = [];
    for (const read of reads) {
      const outcome = await applyOne(client, await read());
      outcomes.push(outcome);
      if (flags.output === "text" || flags.output === undefined) {
        (outcome.result === "failed" ? process.stderr : process.stdout).write(`${formatOutcome(outcome)}\n`);
      }
    }
    if (flags.output === "json" || flags.output === "yaml") print({ applied: outcomes }, flags.output, () => "");
    if (outcomes.some((o) => o.result === "failed")) process.exitCode = EXIT.failed;
  });
}
