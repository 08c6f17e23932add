export * from "./agents/index.js";
export * from "./service-config.js";
