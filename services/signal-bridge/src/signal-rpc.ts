import { parseJson } from "@moniro/envelopes";
import { z } from "zod";

const rpcResponseSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.number(), z.string(), z.null()]).optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** JSON-RPC error codes that no retry fixes (PROTOCOLS.md A2): user error, untrusted key, bad request/params. */
const PERMANENT_CODES = new Set([-1, -4, -32600, -32601, -32602]);

/** A failed call to signal-cli, with the verdict the outbound consumer reads. */
export class SignalRpcError extends Error {
  override readonly name = "SignalRpcError";
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly code?: number,
  ) {
    super(message);
  }
}

export interface SignalRpc {
  call(method: string, params: Record<string, unknown>): Promise<unknown>;
}

/**
 * A client of signal-cli's `POST /api/v1/rpc` (PROTOCOLS.md A2): one JSON-RPC
 * 2.0 request per call; `account` is added to every call's params in
 * multi-account mode. Connection failures, timeouts, HTTP errors and
 * rate limits are retryable; user errors are not.
 */
export function signalRpc(options: {
  baseUrl: string;
  account?: string | undefined;
  fetch?: typeof fetch;
  /** How long one call may take (default 20 s: less than the outbound consumer's 30 s ack wait). */
  timeoutMs?: number;
}): SignalRpc {
  const doFetch = options.fetch ?? fetch;
  const url = new URL("/api/v1/rpc", options.baseUrl).toString();
  let nextId = 1;
  return {
    async call(method, params) {
      const id = nextId++;
      const body = {
        jsonrpc: "2.0",
        id,
        method,
        params: options.account ? { ...params, account: options.account } : params,
      };
      let response: Response;
      try {
        response = await doFetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
        });
      } catch (error) {
        throw new SignalRpcError(`signal-cli not reachable at ${url}: ${(error as Error).message}`, true);
      }
      const text = await response.text();
      if (response.status !== 200) {
        throw new SignalRpcError(`signal-cli answered ${response.status} to ${method}: ${text.slice(0, 200)}`, true);
      }
      const parsed = parseJson(text);
      const decoded = parsed.ok ? rpcResponseSchema.safeParse(parsed.value) : undefined;
      if (!decoded?.success) {
        throw new SignalRpcError(
          `signal-cli sent a malformed JSON-RPC answer to ${method}: ${text.slice(0, 200)}`,
          true,
        );
      }
      const { error, result } = decoded.data;
      if (error) {
        throw new SignalRpcError(
          `signal-cli refused ${method}: ${error.message} (code ${error.code})`,
          !PERMANENT_CODES.has(error.code),
          error.code,
        );
      }
      return result;
    },
  };
}
