/** Test helpers (`@moniro/tool-catalog/test`): a ToolContext over fakes and temp workspaces. */

export * from "./processes.js";
export * from "./test-context.js";
