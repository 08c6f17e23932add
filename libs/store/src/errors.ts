import { LeaseLostError, MoniroError } from "@moniro/ports";
import type { ScriptName } from "./scripts/loader.js";
import { type WorkspaceScriptContext, workspaceErrorFromCode } from "./workspace/workspace-error.js";

/** Error codes the Lua scripts return (negative integers, BullMQ style). */
export const SCRIPT_ERROR_CODES = {
  /** The fence (holder + epoch) no longer holds the agent's lease. */
  leaseLost: -1,
} as const;

/** A Redis record that cannot be decoded, or a script answer this code does not understand. */
export class StoreError extends MoniroError {}

export interface ScriptErrorContext {
  script: ScriptName;
  agent?: string;
  epoch?: number;
  /** The instance a workspace script ran on, and what it was about. */
  workspace?: WorkspaceScriptContext;
}

/** The one place where a script's error code becomes an error object. */
export function errorFromCode(code: number, context: ScriptErrorContext): MoniroError {
  switch (code) {
    case SCRIPT_ERROR_CODES.leaseLost:
      return new LeaseLostError(context.agent ?? "(unknown)", context.epoch ?? 0);
    default: {
      const workspaceError = context.workspace ? workspaceErrorFromCode(code, context.workspace) : undefined;
      if (workspaceError) return workspaceError;
      return new StoreError(`Redis script '${context.script}' returned the unknown code ${code}`, {
        errorClass: "crash",
        code: "unknown_script_code",
        details: { ...context, scriptCode: code },
      });
    }
  }
}

/** A stored record failed to decode; names the key and entry so an operator can find it. */
export function corruptEntry(key: string, entryId: string, reason: string): StoreError {
  return new StoreError(`corrupt entry ${entryId} in ${key}: ${reason}`, {
    errorClass: "permanent",
    code: "corrupt_entry",
    details: { key, entryId, reason },
  });
}
