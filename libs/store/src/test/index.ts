/** Test helpers for code that uses Redis (`@moniro/store/test`). */

export * from "../workspace/in-memory-workspace-store.js";
export * from "./redis-cluster.js";
export * from "./redis-fixture.js";
export * from "./thread-entries.js";
