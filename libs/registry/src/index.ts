export * from "./agent-record.js";
export {
  AgentRegistry,
  deleteRegistryBuckets,
  type PutOptions,
  type RemoveOptions,
  registryBucketNames,
} from "./agent-registry.js";
export { definitionOf, registryFieldsOf } from "./definition-fields.js";
export * from "./errors.js";
export {
  type ParsedAgentFiles,
  type SyncLogger,
  type SyncReport,
  syncAgentsDir,
  syncAgentsDirOnce,
  syncAgentsOnce,
} from "./file-sync.js";
export { syncProjectOnce } from "./project-sync.js";
export { type StoredDefinition, validateDefinition } from "./validate.js";
