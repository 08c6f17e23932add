/** Test helpers (`@moniro/llm/test`): a local server that speaks the Anthropic Messages API. */
export * from "./fake-anthropic.js";
export * from "./prompt-cache.js";
export * from "./replies.js";
export type { FakeRequestBlock, FakeRequestBody, FakeRequestMessage } from "./request-body.js";
