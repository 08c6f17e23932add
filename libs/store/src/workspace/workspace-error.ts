import { notAParticipant, workflowNotRunning } from "@moniro/envelopes";
import { MoniroError } from "@moniro/ports";

export const WORKSPACE_ERROR_CODES = [
  "workflow_not_running",
  "not_a_member",
  "post_too_large",
  "empty_post",
  "bad_cursor",
  "bad_member",
  "bad_document_name",
  "document_too_large",
  "too_many_documents",
  "version_conflict",
  "unknown_document",
  "bad_proposal",
  "unknown_proposal",
  "proposal_closed",
  "not_a_voter",
  "unknown_option",
  "workspace_running",
  "bad_instance",
] as const;
export type WorkspaceErrorCode = (typeof WORKSPACE_ERROR_CODES)[number];

/**
 * A workspace operation that was refused: bad input or a state that does not
 * allow it (never retryable as is). The message says what is wrong and what
 * to do; `hint` carries the second line of the seed's two send errors.
 */
export class WorkspaceError extends MoniroError {
  override readonly code: WorkspaceErrorCode;
  readonly hint: string | undefined;

  constructor(code: WorkspaceErrorCode, message: string, details: Record<string, unknown> = {}, hint?: string) {
    super(message, { errorClass: "permanent", code, details });
    this.code = code;
    this.hint = hint;
  }
}

/** What a workspace script was doing, for its error message. */
export interface WorkspaceScriptContext {
  workflow: string;
  tag: string;
  member?: string;
  document?: string;
  proposal?: string;
  option?: string;
  /** A count limit (documents). */
  limit?: number;
  /** A size limit in bytes (one document). */
  maxBytes?: number;
  version?: number;
}

/** Script codes of the workspace scripts (lua/*Workspace*, postChannel, writeDocument, *Proposal). */
export const WORKSPACE_SCRIPT_CODES = {
  notRunning: -10,
  notAMember: -11,
  documentTooLarge: -12,
  tooManyDocuments: -13,
  versionConflict: -14,
  unknownProposal: -15,
  proposalClosed: -16,
  notAVoter: -17,
  unknownOption: -18,
  workspaceRunning: -19,
} as const;

/** A workspace script's code → its error (called from `errorFromCode`, the one place codes become errors). */
export function workspaceErrorFromCode(code: number, context: WorkspaceScriptContext): WorkspaceError | undefined {
  const { workflow, tag } = context;
  const instance = `${workflow}:${tag}`;
  const details = { ...context };
  switch (code) {
    case WORKSPACE_SCRIPT_CODES.notRunning: {
      const refusal = workflowNotRunning(workflow, tag);
      return new WorkspaceError("workflow_not_running", refusal.message, details, refusal.hint);
    }
    case WORKSPACE_SCRIPT_CODES.notAMember: {
      const refusal = notAParticipant(context.member ?? "(unknown)", workflow);
      return new WorkspaceError("not_a_member", refusal.message, details, refusal.hint);
    }
    case WORKSPACE_SCRIPT_CODES.documentTooLarge:
      return new WorkspaceError(
        "document_too_large",
        `document '${context.document}' would be larger than the ${context.maxBytes} bytes one document may hold: split it into several documents`,
        details,
      );
    case WORKSPACE_SCRIPT_CODES.tooManyDocuments:
      return new WorkspaceError(
        "too_many_documents",
        `${instance} already has ${context.limit} documents, the most it may hold: write to an existing one`,
        details,
      );
    case WORKSPACE_SCRIPT_CODES.versionConflict:
      return new WorkspaceError(
        "version_conflict",
        `document '${context.document}' is at version ${context.version}, not the one expected: read it again, then write`,
        details,
      );
    case WORKSPACE_SCRIPT_CODES.unknownProposal:
      return new WorkspaceError("unknown_proposal", `${instance} has no proposal '${context.proposal}'`, details);
    case WORKSPACE_SCRIPT_CODES.proposalClosed:
      return new WorkspaceError(
        "proposal_closed",
        `proposal '${context.proposal}' is closed: see its result with team_proposal_status`,
        details,
      );
    case WORKSPACE_SCRIPT_CODES.notAVoter:
      return new WorkspaceError(
        "not_a_voter",
        `${context.member} may not vote on proposal '${context.proposal}': its voters are the members when it was created`,
        details,
      );
    case WORKSPACE_SCRIPT_CODES.unknownOption:
      return new WorkspaceError(
        "unknown_option",
        `'${context.option}' is not an option of proposal '${context.proposal}': vote for one of its options`,
        details,
      );
    case WORKSPACE_SCRIPT_CODES.workspaceRunning:
      return new WorkspaceError(
        "workspace_running",
        `${instance} is running: stop it before discarding its workspace`,
        details,
      );
    default:
      return undefined;
  }
}
