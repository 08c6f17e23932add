import { describe, expect, it } from "vitest";
import { encodeSseFrame, httpChunk } from "./sse-writer.js";

describe("SSE bytes", () => {
  it("frames a payload once: id, event, data; a payload spanning lines gets one data: line each", () => {
    expect(encodeSseFrame("message", Buffer.from('{"a":1}'), 7).toString()).toBe(
      'id: 7\nevent: message\ndata: {"a":1}\n\n',
    );
    expect(encodeSseFrame("x", Buffer.from("one\ntwo")).toString()).toBe("event: x\ndata: one\ndata: two\n\n");
  });

  it("frames bytes as one HTTP/1.1 chunk: hex size, CRLF, the bytes, CRLF", () => {
    const bytes = Buffer.from("é".repeat(10)); // 20 bytes, 10 characters
    expect(httpChunk(bytes).toString("latin1")).toBe(`14\r\n${bytes.toString("latin1")}\r\n`);
  });
});
