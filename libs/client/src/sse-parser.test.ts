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

  it("joins multi-line data, defaults the event name to message, and accepts CR, LF and CRLF (split too)", () => {
    const parser = new SseParser();
    expect(parser.push("data: one\r")).toEqual([]);
    expect(parser.push("\ndata: two\r\n\r")).toEqual([]);
    expect(parser.push("\ndata: three\r\r")).toEqual([{ event: "message", data: "one\ntwo" }]);
    // The last CR could have been half of a CRLF: it ends the frame once the next chunk shows it was not.
    expect(parser.push("data: four\n\n")).toEqual([
      { event: "message", data: "three" },
      { event: "message", data: "four" },
    ]);
  });

  it("keeps the frame's id, remembers the last id (also of a frame without data) and the server's retry", () => {
    const parser = new SseParser();
    expect(
      parser.push("\uFEFFretry: 2000\n: connected\n\nid: 7\nevent: message\ndata: {}\n\nevent: x\ndata: y\n\n"),
    ).toEqual([
      { event: "message", data: "{}", id: "7" },
      { event: "x", data: "y" },
    ]);
    expect(parser.lastEventId).toBe("7");
    expect(parser.retryMs).toBe(2000);
    expect(parser.push("id: 9\n\nretry: soon\n\n")).toEqual([]);
    expect(parser.lastEventId).toBe("9");
    expect(parser.retryMs).toBe(2000);
  });
});
