import { describe, expect, it } from "vitest";
import { SseParser } from "./sse-parser.js";

describe("SseParser", () => {
  it("parses named events split across chunks, skipping comments", () => {
    const parser = new SseParser();
    expect(parser.push(': keep-alive\n\nevent: llm-delta\ndata: {"a":')).toEqual([]);
    expect(parser.push('1}\n\nevent:message\ndata:{"text":"hi"}\n\n')).toEqual([
      { event: "llm-delta", data: '{"a":1}' },
      { event: "message", data: '{"text":"hi"}' },
    ]);
  });

  it("joins multi-line data and defaults the event name to message", () => {
    expect(new SseParser().push("data: one\r\ndata: two\r\n\r\n")).toEqual([{ event: "message", data: "one\ntwo" }]);
  });
});
