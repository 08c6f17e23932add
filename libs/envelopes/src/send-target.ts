import { z } from "zod";
import { NAME_PATTERN } from "./names.js";

/** The tag an instance gets when none is given (`@review` is `@review:main`). */
export const DEFAULT_TAG = "main";

/**
 * Where a user's message goes, one grammar everywhere (CLI `moniro send`, HTTP `POST /v1/send`):
 * - `alice`: a DM to alice, in her personal context;
 * - `@review` / `@review:pr-123`: a post to that instance's workspace channel;
 * - `alice@review` / `alice@review:pr-123`: alice, working in that workspace.
 */
export type SendTarget =
  | { kind: "dm"; agent: string }
  | { kind: "channel"; workflow: string; tag: string }
  | { kind: "workspace-agent"; agent: string; workflow: string; tag: string };

/** A target that does not parse; the message says what is wrong and what to write. */
export class SendTargetError extends Error {
  override readonly name = "SendTargetError";
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`invalid target '${target}': ${reason}`);
  }
}

const FORMS = "write 'alice' (a DM), '@review[:tag]' (the review workspace channel) or 'alice@review[:tag]'";
const NAME_RULE = "1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit";

function checkName(target: string, value: string, what: string): string {
  if (value === "") throw new SendTargetError(target, `the ${what} is missing: ${FORMS}`);
  if (!NAME_PATTERN.test(value)) {
    const lower = value.toLowerCase();
    const hint = lower !== value && NAME_PATTERN.test(lower) ? ` (names are lower-case: '${lower}')` : "";
    throw new SendTargetError(target, `the ${what} '${value}' must be ${NAME_RULE}${hint}`);
  }
  return value;
}

/** `review` or `review:pr-123` → workflow and tag (`main` when absent). */
function workspaceOf(target: string, text: string): { workflow: string; tag: string } {
  const parts = text.split(":");
  if (parts.length > 2) {
    throw new SendTargetError(target, `a workspace is '<workflow>' or '<workflow>:<tag>', with one ':' at most`);
  }
  const workflow = checkName(target, parts[0] ?? "", "workflow");
  if (workflow === "personal") {
    throw new SendTargetError(target, "'personal' is the personal context, not a workflow: send 'alice' for a DM");
  }
  const tag = parts.length === 2 ? checkName(target, parts[1] ?? "", "tag") : DEFAULT_TAG;
  return { workflow, tag };
}

/** Parses a send target; throws a SendTargetError naming what is wrong. */
export function parseSendTarget(target: string): SendTarget {
  if (target.trim() === "") throw new SendTargetError(target, `the target is empty: ${FORMS}`);
  if (/\s/.test(target)) throw new SendTargetError(target, `a target has no spaces: ${FORMS}`);
  const at = target.indexOf("@");
  if (at !== target.lastIndexOf("@")) throw new SendTargetError(target, `a target has one '@' at most: ${FORMS}`);
  if (at < 0) {
    if (target.includes(":")) {
      const [agent] = target.split(":");
      throw new SendTargetError(
        target,
        `a DM target is a bare agent name; for an agent in a workspace write '${agent}@<workflow>[:<tag>]', for a channel '@<workflow>[:<tag>]'`,
      );
    }
    return { kind: "dm", agent: checkName(target, target, "agent") };
  }
  const workspace = workspaceOf(target, target.slice(at + 1));
  if (at === 0) return { kind: "channel", ...workspace };
  return { kind: "workspace-agent", agent: checkName(target, target.slice(0, at), "agent"), ...workspace };
}

/** A target in a request body (`POST /v1/send { target }`): parsed, or an issue saying what is wrong. */
export const sendTargetSchema = z
  .string({ error: "must be a string: 'alice', '@review[:tag]' or 'alice@review[:tag]'" })
  .transform((value, ctx): SendTarget => {
    try {
      return parseSendTarget(value);
    } catch (error) {
      if (!(error instanceof SendTargetError)) throw error;
      ctx.addIssue({ code: "custom", message: error.reason, input: value });
      return z.NEVER;
    }
  });

/** The canonical text of a target (`@review:main` for `@review`). */
export function formatSendTarget(target: SendTarget): string {
  switch (target.kind) {
    case "dm":
      return target.agent;
    case "channel":
      return `@${target.workflow}:${target.tag}`;
    case "workspace-agent":
      return `${target.agent}@${target.workflow}:${target.tag}`;
  }
}

/** A user-facing refusal: the first line says what is wrong, the second how to fix it. */
export interface SendRefusal {
  code: "workflow_not_running" | "not_a_participant";
  message: string;
  hint: string;
}

/** `<workflow>` for the default tag, `<workflow>:<tag>` otherwise. */
function instanceName(workflow: string, tag: string): string {
  return tag === DEFAULT_TAG ? workflow : `${workflow}:${tag}`;
}

/**
 * Seed 004 "Send to Unregistered Workspace": the instance is not running. The
 * hint's command gives `--var <name>=<value>` for each variable the start requires.
 */
export function workflowNotRunning(
  workflow: string,
  tag: string = DEFAULT_TAG,
  requiredVariables: readonly string[] = [],
): SendRefusal {
  const variables = requiredVariables.map((name) => ` --var ${name}=<value>`).join("");
  return {
    code: "workflow_not_running",
    message: `workflow "${instanceName(workflow, tag)}" is not running.`,
    hint: `Start it with: moniro start ${workflow}${tag === DEFAULT_TAG ? "" : ` --tag ${tag}`}${variables}`,
  };
}

/**
 * Seed 004 "Send to Unregistered Workspace": the agent is not in the workflow's
 * file — `file` when the caller knows it (the gateway reads MONIRO_WORKFLOWS_DIR), else `.workflows/<workflow>.yaml`.
 */
export function notAParticipant(agent: string, workflow: string, file = `.workflows/${workflow}.yaml`): SendRefusal {
  return {
    code: "not_a_participant",
    message: `${agent} is not a participant in workflow "${workflow}".`,
    hint: `Add ${agent} to ${file} first.`,
  };
}

/** The refusal as the CLI prints it after `Error: `: message, newline, hint. */
export function refusalText(refusal: SendRefusal): string {
  return `${refusal.message}\n${refusal.hint}`;
}
