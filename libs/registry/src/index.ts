export * from "./agent-record.js";
export { AgentRegistry, type PutOptions, type RemoveOptions, registryBucketNames } from "./agent-registry.js";
export * from "./errors.js";
export { type StoredDefinition, validateDefinition } from "./validate.js";
