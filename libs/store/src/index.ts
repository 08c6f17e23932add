export * from "./codec.js";
export * from "./connect.js";
export * from "./errors.js";
export * from "./keys.js";
export * from "./redis-agent-state-store.js";
export * from "./redis-inbox.js";
export * from "./redis-lease.js";
export * from "./redis-thread-store.js";
export { runScript, SCRIPT_FILES, type ScriptName } from "./scripts/loader.js";
