export {
  type NamedMember,
  RedisWorkspaceStore,
  type RedisWorkspaceStoreOptions,
  WorkspaceInstance,
  type WorkspaceState,
} from "./redis-workspace-store.js";
export {
  type ChannelPage,
  DEFAULT_READ_LIMIT,
  MAX_READ_LIMIT,
  type PostResult,
  WorkspaceChannel,
} from "./workspace-channel.js";
export { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from "./workspace-context.js";
export {
  type Document,
  type DocumentInfo,
  WorkspaceDocuments,
  type WriteDocumentOptions,
} from "./workspace-documents.js";
export { WORKSPACE_ERROR_CODES, WorkspaceError, type WorkspaceErrorCode } from "./workspace-error.js";
export {
  DEFAULT_OPTIONS,
  MAX_OPTIONS,
  type ProposalState,
  type VoteResult,
  WorkspaceProposals,
} from "./workspace-proposals.js";
