import { createHash, type Hash } from "node:crypto";
import { cacheSegments, type FakeRequestBody } from "./request-body.js";
import { estimateTokens } from "./usage-estimate.js";

/** How far back from a breakpoint the API looks for an earlier cache entry (in blocks). */
export const CACHE_LOOKBACK_BLOCKS = 20;
/** The API's smallest cacheable prefix for Sonnet and Opus (2,048 for Haiku): PROTOCOLS.md B5. */
export const DEFAULT_CACHE_MIN_TOKENS = 1024;
const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;

export interface PromptCacheOptions {
  /** Prefixes shorter than this many tokens are neither written nor read (default 1,024). */
  minTokens?: number;
  /** The clock the lifetimes run on (default `Date.now`). */
  now?: () => number;
}

/** The input side of `usage`, as the API reports it (PROTOCOLS.md B5). */
export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

interface Entry {
  expiresAt: number;
  ttlMs: number;
}

/**
 * Prompt caching as the API documents it. The prompt (tools → system →
 * messages, one segment per block, `cache_control` itself not part of the
 * content) is a cache entry at each breakpoint, kept per scope (API key and
 * model) for 5 minutes (or 1 hour with `ttl: "1h"`), refreshed by each hit.
 * A request reads the longest live entry found at one of its breakpoints or
 * up to 20 blocks before it, and writes the prefix up to each breakpoint
 * beyond that; prefixes under `minTokens` are not cached. `input_tokens`
 * counts only what follows the last breakpoint (or everything, when nothing
 * could be cached).
 */
export class PromptCacheSimulator {
  private readonly entries = new Map<string, Entry>();
  private readonly minTokens: number;
  private readonly now: () => number;

  constructor(options: PromptCacheOptions = {}) {
    this.minTokens = options.minTokens ?? DEFAULT_CACHE_MIN_TOKENS;
    this.now = options.now ?? Date.now;
  }

  usageFor(body: FakeRequestBody, scope: string): CacheUsage {
    const segments = cacheSegments(body);
    const hash: Hash = createHash("sha256").update(`${scope}\u0000${body.model}\u0000`);
    const keys: string[] = [];
    const chars: number[] = [];
    let length = 0;
    for (const segment of segments) {
      hash.update(segment.text).update("\u0000");
      length += segment.text.length;
      keys.push(hash.copy().digest("base64"));
      chars.push(length);
    }
    const total = estimateTokens(length);
    const none = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    const breakpoints = segments.flatMap((segment, index) => (segment.breakpoint ? [index] : []));
    const now = this.now();
    let read = -1;
    for (const breakpoint of breakpoints) {
      for (let at = breakpoint; at >= 0 && at >= breakpoint - CACHE_LOOKBACK_BLOCKS; at--) {
        if (this.live(keys[at] as string, now)) {
          read = Math.max(read, at);
          break;
        }
      }
    }
    const readTokens = read >= 0 ? estimateTokens(chars[read] as number) : 0;
    if (read >= 0) this.refresh(keys[read] as string, now);
    const creation = { ...none };
    let written = read;
    for (const breakpoint of breakpoints) {
      const tokens = estimateTokens(chars[breakpoint] as number);
      if (tokens < this.minTokens) continue;
      const ttl = segments[breakpoint]?.ttl ?? "5m";
      this.entries.set(keys[breakpoint] as string, { expiresAt: now + TTL_MS[ttl], ttlMs: TTL_MS[ttl] });
      if (breakpoint <= written) continue;
      const from = written >= 0 ? estimateTokens(chars[written] as number) : 0;
      creation[ttl === "1h" ? "ephemeral_1h_input_tokens" : "ephemeral_5m_input_tokens"] += tokens - from;
      written = breakpoint;
    }
    const created = creation.ephemeral_5m_input_tokens + creation.ephemeral_1h_input_tokens;
    return {
      input_tokens: total - readTokens - created,
      cache_creation_input_tokens: created,
      cache_read_input_tokens: readTokens,
      cache_creation: creation,
    };
  }

  private live(key: string, now: number): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (entry.expiresAt > now) return true;
    this.entries.delete(key);
    return false;
  }

  private refresh(key: string, now: number): void {
    const entry = this.entries.get(key);
    if (entry) entry.expiresAt = now + entry.ttlMs;
  }
}
