/** Fakes of every port, for tests (`@moniro/ports/test`). Each records what it was asked to do. */
export * from "./envelopes.js";
export * from "./fake-clock.js";
export * from "./fake-tool-bus.js";
export * from "./ids.js";
export * from "./in-memory-agent-state-store.js";
export * from "./in-memory-inbox.js";
export * from "./in-memory-lease.js";
export * from "./in-memory-personal-context.js";
export * from "./in-memory-run-end.js";
export * from "./in-memory-thread-store.js";
export * from "./recorders.js";
export * from "./scripted-llm.js";
