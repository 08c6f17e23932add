export * from "./agents/index.js";
export * from "./service-config.js";
export * from "./workflows/index.js";
