export * from "./loop/index.js";
export * from "./runtime/index.js";
