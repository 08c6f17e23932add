export {
  type ChannelPostDeps,
  MentionsNotDeliveredError,
  postToChannel,
  workspaceContext,
  workspaceSource,
} from "./post-to-channel.js";
export { RedisWorkspaceStore, type RedisWorkspaceStoreOptions, WorkspaceInstance } from "./redis-workspace-store.js";
export {
  DEFAULT_READ_LIMIT,
  decodeChannelEntry,
  decodeChannelItem,
  MAX_READ_LIMIT,
  WorkspaceChannel,
} from "./workspace-channel.js";
export { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from "./workspace-context.js";
export { WorkspaceDocuments } from "./workspace-documents.js";
export { WORKSPACE_ERROR_CODES, WorkspaceError, type WorkspaceErrorCode } from "./workspace-error.js";
export { type Membership, membershipOf, splitContext } from "./workspace-membership.js";
export type {
  Channel,
  ChannelItem,
  ChannelPage,
  Delivery,
  Document,
  DocumentInfo,
  Documents,
  MemberView,
  MemberViewOptions,
  NamedMember,
  PostInput,
  PostResult,
  ProposalState,
  Proposals,
  UnreadableChannelEntry,
  VoteResult,
  Workspace,
  WorkspaceState,
  WorkspaceStore,
  WriteDocumentOptions,
} from "./workspace-port.js";
export { isUnreadable } from "./workspace-port.js";
export { compareEntryIds, StoreWorkspaceContext } from "./workspace-prompt-context.js";
export { DEFAULT_OPTIONS, MAX_OPTIONS, WorkspaceProposals } from "./workspace-proposals.js";
