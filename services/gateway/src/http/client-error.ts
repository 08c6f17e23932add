import { maxHeaderSize, type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { ErrorCode } from "./http-error.js";

/** The answer to a request Node's HTTP parser refused before express saw it. */
function answerFor(error: NodeJS.ErrnoException): { status: number; code: ErrorCode; message: string } {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return {
      status: 431,
      code: "headers_too_large",
      message: `the request line and headers are larger than the ${maxHeaderSize} bytes the gateway accepts; send a shorter URL (put data in a JSON body) or fewer headers`,
    };
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { status: 408, code: "request_timeout", message: "the request headers did not arrive in time; send again" };
  }
  return {
    status: 400,
    code: "bad_request",
    message: `the request is not valid HTTP/1.1 (${error.code ?? "parse error"}); see docs/api.md`,
  };
}

/**
 * Node's HTTP parser answers malformed requests and oversized headers (431)
 * itself, with an empty body, before express runs. This gives those answers
 * the API's JSON error body too.
 */
export function answerClientErrorsWithJson(server: Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this socket must not be corrupted by a second one (as Node itself checks).
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, message } = answerFor(error);
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
