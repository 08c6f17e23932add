import { membershipOf, splitContext, type WorkspaceStore, workspaceContext } from "@moniro/store";

/**
 * Where a definition's wakeup with `schedule.workspace` lands: `<workflow>:<tag>` when that
 * instance runs with the agent as a member; `<workflow>` → every running instance of it
 * with the agent as a member. Empty: the wakeup stays personal.
 */
export function workspaceContextsOf(store: WorkspaceStore) {
  return async (agent: string, workspace: string): Promise<string[]> => {
    const instance = splitContext(workspace);
    if (instance) return (await membershipOf(store, agent, instance)).ok ? [workspace] : [];
    const states = await store.list();
    return states
      .filter(
        (state) =>
          state.workflow === workspace &&
          state.status === "running" &&
          state.members.some((member) => member.agent === agent),
      )
      .map((state) => workspaceContext(state.workflow, state.tag))
      .sort();
  };
}
