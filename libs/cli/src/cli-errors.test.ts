import { GatewayUnreachableError, InvalidGatewayUrlError, MoniroApiError } from "@moniro/client";
import { describe, expect, it } from "vitest";
import { CliError, reportError } from "./cli-errors.js";

describe("reportError", () => {
  it("an unreachable gateway: one line naming the URL and what to do, exit 3", () => {
    expect(reportError(new GatewayUnreachableError("http://gw:8080", "ECONNREFUSED"), "send", {})).toEqual({
      lines: [
        "moniro send: cannot reach the gateway at http://gw:8080 (ECONNREFUSED): is the gateway running? start it with `moniro up` or set MONIRO_GATEWAY_URL",
      ],
      exitCode: 3,
    });
  });

  it("a gateway URL that is not http(s): a usage error naming the flag and the fix, exit 2", () => {
    expect(reportError(new InvalidGatewayUrlError("--gateway", "localhost:8080"), "send", {})).toEqual({
      lines: ["moniro send: --gateway 'localhost:8080' is not an http(s) URL: write http://localhost:8080"],
      exitCode: 2,
    });
  });

  it("an API error: the request, status, code and the gateway's message; 404 → 4, 401 → 5 with a hint, 503 → 6", () => {
    const notFound = new MoniroApiError(404, "unknown_agent", "no agent named 'x'", "GET http://gw/v1/agents/x");
    expect(reportError(notFound, "agent info", {})).toEqual({
      lines: ["moniro agent info: GET http://gw/v1/agents/x answered 404 unknown_agent: no agent named 'x'"],
      exitCode: 4,
    });
    const unauthorized = reportError(
      new MoniroApiError(401, "unauthorized", "bad key", "GET http://gw/v1/x"),
      "status",
      {},
    );
    expect(unauthorized.exitCode).toBe(5);
    expect(unauthorized.lines[1]).toBe("hint: set MONIRO_API_KEY to one of the gateway's keys (its MONIRO_API_KEYS)");
    expect(
      reportError(new MoniroApiError(503, "runner_unavailable", "no runner", "POST u"), "pause", {}).exitCode,
    ).toBe(6);
    expect(
      reportError(new MoniroApiError(400, "invalid_body", "text: must not be empty", "POST u"), "send", {}).exitCode,
    ).toBe(2);
  });

  it("a command's own error keeps its exit code and hint", () => {
    expect(reportError(new CliError("refused", 1, "hint: x"), "cancel", {})).toEqual({
      lines: ["moniro cancel: refused", "hint: x"],
      exitCode: 1,
    });
  });

  it("an unexpected error: one line and how to see the stack; the stack only with MONIRO_DEBUG=1", () => {
    const error = new RangeError("boom\nsecond line");
    expect(reportError(error, "thread", {})).toEqual({
      lines: ["moniro thread: unexpected error: boom", "hint: rerun with MONIRO_DEBUG=1 to see the stack trace"],
      exitCode: 1,
    });
    const debug = reportError(error, "thread", { MONIRO_DEBUG: "1" });
    expect(debug.lines[0]).toBe("moniro thread: unexpected error: boom");
    expect(debug.lines[1]).toMatch(/^RangeError: boom\n[\s\S]*\n\s+at /);
  });
});
