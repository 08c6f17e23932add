import Anthropic from "@anthropic-ai/sdk";
import type { Stream } from "@anthropic-ai/sdk/core/streaming";
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResponse } from "@moniro/ports";
import { LlmError } from "@moniro/ports";
import { toLlmError } from "./errors.js";
import { MessageAccumulator } from "./message-accumulator.js";
import { nodeHttpFetch } from "./node-fetch.js";
import { RequestJsonEncoder } from "./request-json.js";

export const DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com";
export const DEFAULT_LLM_TIMEOUT_MS = 120_000;

export interface AnthropicProviderOptions {
  apiKey: string;
  /** Without `/v1`; default https://api.anthropic.com. */
  baseURL?: string;
  /**
   * Longest wait for the response headers, and for each next stream event
   * after them (the API pings while it thinks, so silence this long means a
   * dead connection). Either is a transient `timeout`. Default 120 s.
   */
  timeoutMs?: number;
  /** `cache_control` breakpoints on tools, system and conversation (default on). */
  promptCaching?: boolean;
}

/**
 * The Anthropic Messages API through the official SDK, always streamed. The
 * SDK's own retries are off (`maxRetries: 0`): the loop owns retries and
 * reads the verdict on the `LlmError` this rejects with.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): LlmProvider {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
  const client = clientFor(options.apiKey, options.baseURL ?? DEFAULT_ANTHROPIC_BASE_URL, timeoutMs);
  const promptCaching = options.promptCaching ?? true;

  return {
    name: "anthropic",
    stream(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<LlmResponse> {
      const { signal } = callOptions;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const body = ENCODER.encode(request, { promptCaching });
      return untilAborted(streamMessage(client, body, callOptions, timeoutMs), signal);
    },
  };
}

/**
 * Shared by every provider of the process: the runner makes one provider per
 * agent, and agents share their tool specs (the catalog's objects), so an
 * agent's first call finds them serialised already.
 */
const ENCODER = new RequestJsonEncoder();

/** One SDK client per key, base URL and timeout (a client holds nothing per call); an agent's first call makes none. */
const clients = new Map<string, Anthropic>();

function clientFor(apiKey: string, baseURL: string, timeoutMs: number): Anthropic {
  const key = JSON.stringify([apiKey, baseURL, timeoutMs]);
  let client = clients.get(key);
  if (!client) {
    client = new Anthropic({
      apiKey,
      baseURL,
      maxRetries: 0,
      timeout: timeoutMs,
      // The runner traces each call itself (a `chat <model>` span with gen_ai
      // attributes); the SDK's own spans would double it, and its propagation
      // would send our trace ids to the API.
      openTelemetry: { traces: false, propagation: false },
      // fetch clones every request (and tees its body stream) to be able to follow a
      // redirect, unless redirects are errors and there is no window: the API never
      // redirects, so a 3xx fails the call (a transient connection error) instead.
      fetchOptions: { redirect: "error", window: null },
      // Node's HTTP client under fetch's shape: half the CPU of the global fetch per call (node-fetch.ts).
      fetch: nodeHttpFetch,
    });
    clients.set(key, client);
  }
  return client;
}

/** The body's JSON bytes are sent as they are (the SDK passes bytes verbatim). */
const JSON_BODY = { "content-type": "application/json" } as const;

async function streamMessage(
  client: Anthropic,
  body: Uint8Array,
  { signal, onTextDelta }: LlmCallOptions,
  timeoutMs: number,
): Promise<LlmResponse> {
  const call = new CallAbort(timeoutMs, signal);
  const accumulator = new MessageAccumulator(onTextDelta);
  try {
    // `client.post` is the SDK's generic request (what `messages.create` ends in), so the body
    // can be our JSON bytes (built mostly from pieces cached between calls) instead of
    // params the SDK would serialise whole on every call. Same bytes, same SSE stream.
    const events = await client.post<Stream<Anthropic.RawMessageStreamEvent>>("/v1/messages", {
      body,
      headers: JSON_BODY,
      stream: true,
      signal: call.signal,
    });
    call.restart();
    for await (const event of events) {
      call.restart();
      accumulator.add(event);
    }
    // The SDK ends the iteration quietly when the request is aborted.
    if (call.signal.aborted) throw call.signal.reason;
    return accumulator.result();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (call.timedOut) throw call.signal.reason;
    throw toLlmError(error);
  } finally {
    call.stop();
  }
}

/**
 * The one signal a call hands the SDK: aborted by the caller's signal (with
 * its reason), or when `restart()` has not been called for `ms` (a timeout).
 * One controller and a listener, instead of `AbortSignal.any` per call.
 */
class CallAbort {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  readonly signal = this.controller.signal;
  timedOut = false;

  constructor(
    private readonly ms: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.restart();
    outer?.addEventListener("abort", this.forward, { once: true });
  }

  private readonly forward = (): void => this.controller.abort(this.outer?.reason);

  private readonly expire = (): void => {
    this.timedOut = true;
    this.controller.abort(
      new LlmError(`Anthropic API sent nothing for ${this.ms} ms`, { errorClass: "transient", code: "timeout" }),
    );
  };

  /**
   * Called on every stream event: re-arms the one timer (`refresh`), instead of a new Timeout
   * (an async resource, a timer-list insert) per event.
   */
  restart(): void {
    if (this.timer === undefined) this.timer = setTimeout(this.expire, this.ms);
    else this.timer.refresh();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.forward);
  }
}

/** Settles with `promise`, or rejects with the abort reason the moment `signal` fires. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
