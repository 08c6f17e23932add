import { describe, expect, it } from "vitest";
import { encodeSseFrame, httpChunk } from "./sse-writer.js";

describe("SSE bytes", () => {
  it("frames a payload once: id, event, data; a payload spanning lines gets one data: line each", () => {
    expect(encodeSseFrame("message", Buffer.from('{"a":1}'), 7).toString()).toBe(
      'id: 7\nevent: message\ndata: {"a":1}\n\n',
    );
    expect(encodeSseFrame("x", Buffer.from("one\ntwo")).toString()).toBe("event: x\ndata: one\ndata: two\n\n");
  });

  it("copies a payload byte for byte, from a view into a larger buffer too, and frames each event's name right", () => {
    const wire = Buffer.from('xx{"text":"é ☃"}yy');
    const payload = wire.subarray(2, wire.length - 2);
    for (let round = 0; round < 2; round++) {
      expect(encodeSseFrame("cycle-ended", payload)).toEqual(
        Buffer.from('event: cycle-ended\ndata: {"text":"é ☃"}\n\n'),
      );
      expect(encodeSseFrame("message", payload, 12345678901).toString()).toBe(
        'id: 12345678901\nevent: message\ndata: {"text":"é ☃"}\n\n',
      );
    }
    expect(encodeSseFrame("state-changed", Buffer.from("{}")).toString()).toBe("event: state-changed\ndata: {}\n\n");
  });

  it("frames bytes as one HTTP/1.1 chunk: hex size, CRLF, the bytes, CRLF", () => {
    const bytes = Buffer.from("é".repeat(10)); // 20 bytes, 10 characters
    expect(httpChunk(bytes).toString("latin1")).toBe(`14\r\n${bytes.toString("latin1")}\r\n`);
  });
});
