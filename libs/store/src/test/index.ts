/** Test helpers for code that uses Redis (`@moniro/store/test`). */
export * from "./redis-cluster.js";
export * from "./redis-fixture.js";
