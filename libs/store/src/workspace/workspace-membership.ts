import type { WorkspaceRefusal } from "@moniro/ports";
import type { NamedMember, Workspace, WorkspaceStore } from "./workspace-port.js";

/** `<workflow>:<tag>` → its parts; undefined for `personal` (or anything without a ':'). */
export function splitContext(context: string): { workflow: string; tag: string } | undefined {
  const at = context.indexOf(":");
  if (at < 0) return undefined;
  return { workflow: context.slice(0, at), tag: context.slice(at + 1) };
}

export type Membership =
  | { ok: true; instance: Workspace; member: NamedMember; members: NamedMember[] }
  | { ok: false; refused: WorkspaceRefusal };

/**
 * Whether `agent` may work in `<workflow>:<tag>`: the instance runs and one of
 * its members is done by this agent (a ref'd agent under its member name, an
 * inline agent under its instance name). One read of the instance's state.
 */
export async function membershipOf(
  store: WorkspaceStore,
  agent: string,
  workspace: { workflow: string; tag: string },
): Promise<Membership> {
  const instance = store.instance(workspace.workflow, workspace.tag);
  const state = await instance.state();
  if (state?.status !== "running") return { ok: false, refused: "workflow_not_running" };
  const member = state.members.find((candidate) => candidate.agent === agent);
  if (!member) return { ok: false, refused: "not_a_participant" };
  return { ok: true, instance, member, members: state.members };
}
