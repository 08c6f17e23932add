/**
 * The team tools (a workflow instance's channel, inbox, members, documents
 * and proposals): they work only in a workspace context (`<workflow>:<tag>`),
 * for a member of a running instance; the runner offers them to the model
 * only in workspace-context cycles.
 */
export const TEAM_TOOL_NAMES = [
  "channel_send",
  "channel_read",
  "inbox",
  "inbox_ack",
  "team_members",
  "team_doc_list",
  "team_doc_read",
  "team_doc_write",
  "team_proposal_create",
  "team_proposal_vote",
  "team_proposal_status",
] as const;

/**
 * The tools of @moniro/tool-catalog by name, in the order the model sees
 * them. Named here so the `tools:` block of a definition validates without
 * loading the catalog; the catalog's own test checks the two lists agree.
 */
export const CATALOG_TOOL_NAMES = [
  "message",
  "read",
  "write",
  "edit",
  "apply_patch",
  "grep",
  "glob",
  "ls",
  "exec",
  "process",
  "memory_write",
  "memory_get",
  "memory_search",
  "memory_delete",
  "note_write",
  "note_read",
  "todo_add",
  "todo_list",
  "todo_done",
  "history_search",
  "history_read",
  "cron",
  ...TEAM_TOOL_NAMES,
] as const;

/**
 * Named tool profiles (the `tools.profile` of an agent YAML). `skip` is not
 * listed: the runner handles it itself for every agent.
 */
const FILES_READ = ["read", "grep", "glob", "ls"] as const;
const FILES_WRITE = ["write", "edit", "apply_patch"] as const;
const COMMANDS = ["exec", "process"] as const;
const CONTEXT_READ = [
  "memory_get",
  "memory_search",
  "note_read",
  "todo_list",
  "history_search",
  "history_read",
] as const;
const CONTEXT_WRITE = ["memory_write", "memory_delete", "note_write", "todo_add", "todo_done"] as const;

export const TOOL_PROFILES = {
  full: [
    ...FILES_READ,
    ...FILES_WRITE,
    ...COMMANDS,
    "message",
    ...CONTEXT_READ,
    ...CONTEXT_WRITE,
    "cron",
    ...TEAM_TOOL_NAMES,
  ],
  coding: [
    ...FILES_READ,
    ...FILES_WRITE,
    ...COMMANDS,
    "message",
    ...CONTEXT_READ,
    ...CONTEXT_WRITE,
    ...TEAM_TOOL_NAMES,
  ],
  messaging: ["message", ...CONTEXT_READ, ...CONTEXT_WRITE, "cron", ...TEAM_TOOL_NAMES],
  /** Sub-agents: look, recall and report back to the parent; change nothing. */
  readonly: [...FILES_READ, "message", ...CONTEXT_READ],
} as const satisfies Record<string, readonly string[]>;

export type ToolProfileName = keyof typeof TOOL_PROFILES;
export const PROFILE_NAMES = Object.keys(TOOL_PROFILES) as ToolProfileName[];

/** Tools other components provide (runner, workflows): valid in allow/deny, not executed here. */
export const EXTERNAL_TOOL_NAMES = ["skip", "subagent"] as const;
