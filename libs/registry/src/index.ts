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
export { type SyncLogger, type SyncReport, syncAgentsDir, syncAgentsDirOnce } from "./file-sync.js";
export { type StoredDefinition, validateDefinition } from "./validate.js";
