import { describeWorkspaceContract } from "../contract/workspace.contract.js";
import { InMemoryWorkspaceStore } from "./in-memory-workspace-store.js";

describeWorkspaceContract(" in memory", ({ clock, limits }) => ({
  store: new InMemoryWorkspaceStore({ clock, limits }),
  cleanup: async () => undefined,
}));
