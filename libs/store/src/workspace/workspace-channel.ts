import {
  type ChannelEntry,
  channelPostSchema,
  decode,
  isChannelCursor,
  parseMentions,
  STREAM_ID_PART_MAX,
} from "@moniro/envelopes";
import { corruptEntry } from "../errors.js";
import { ENTRY_FIELD } from "../keys.js";
import { checkMember, posterKind, runWorkspaceScript, type WorkspaceContext } from "./workspace-context.js";
import { WorkspaceError } from "./workspace-error.js";
import type { Channel, ChannelItem, ChannelPage, Delivery, PostInput, PostResult } from "./workspace-port.js";

export const DEFAULT_READ_LIMIT = 100;
export const MAX_READ_LIMIT = 1000;

type StreamEntries = Array<[string, string[]]>;

/** The largest stream id: no entry comes after it. */
const LAST_STREAM_ID = `${STREAM_ID_PART_MAX}-${STREAM_ID_PART_MAX}`;

export function checkCursor(cursor: string, what = "cursor"): string {
  if (!isChannelCursor(cursor)) {
    throw new WorkspaceError(
      "bad_cursor",
      `${what} '${cursor}' is not a channel entry id: pass an id from a previous read, such as '1732612345678-0'`,
      { cursor },
    );
  }
  return cursor;
}

export function checkLimit(limit: number, what: string): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_READ_LIMIT) {
    throw new WorkspaceError(
      "bad_cursor",
      `${what} must be a whole number from 1 to ${MAX_READ_LIMIT} (got ${limit})`,
      {
        limit,
      },
    );
  }
  return limit;
}

/** A post's sender and text, checked before anything is written; returns the sender's kind. */
export function checkPost(from: string, text: string, maxChars: number): "member" | "tag" {
  const kind = posterKind(from);
  if (text.trim() === "") throw new WorkspaceError("empty_post", "a channel post needs text", { from });
  if (text.length > maxChars) {
    throw new WorkspaceError(
      "post_too_large",
      `a channel post is at most ${maxChars.toLocaleString("en-US")} characters (this one has ${text.length.toLocaleString("en-US")}): put long text in a document (team_doc_write) and post its name`,
      { from, chars: text.length, limit: maxChars },
    );
  }
  return kind;
}

/** `<ms>-<seq>` with both parts padded to 20 digits: sorts as text in stream order (as `paddedId` in Lua). */
export function paddedEntryId(id: string): string {
  const [ms = "", seq = ""] = id.split("-");
  return `${ms.padStart(20, "0")}-${seq.padStart(20, "0")}`;
}

function entryIdOfPadded(padded: string): string {
  const [ms = "0", seq = "0"] = padded.split("-");
  return `${ms.replace(/^0+(?=\d)/, "")}-${seq.replace(/^0+(?=\d)/, "")}`;
}

/**
 * The channel of one instance: an append-only Redis stream of posts, each
 * member's "last seen" cursor, and each member's unread @mentions (the
 * inbox). Pushing a mentioned member's input is the caller's: `post` says
 * whom to notify.
 */
export class WorkspaceChannel implements Channel {
  constructor(private readonly context: WorkspaceContext) {}

  /**
   * Posts as a member (`alice`) or from outside (`http:bob`, `workflow:review`).
   * @mentions are parsed from the text; mentions of non-members are returned
   * in `unreached` and the post is kept. Refused when the instance is not
   * running, the sender is not a member, or the text is empty or too long.
   */
  async post(input: { from: string; text: string }): Promise<PostResult> {
    return (await this.deliver(input)).post;
  }

  /**
   * `post`, also naming the agent of each notified member; or, given
   * `agent`, a post as the member that agent plays, its membership checked
   * in the same script (one round trip: check, post, whom to push).
   */
  async deliver(input: PostInput): Promise<Delivery> {
    const { text } = input;
    const byAgent = "agent" in input;
    const sender = byAgent ? checkMember(input.agent) : input.from;
    const senderKind = checkPost(sender, text, this.context.limits.maxPostChars);
    const kind = byAgent ? "agent" : senderKind;
    const tail = `${JSON.stringify({ text, at: this.context.clock.now() }).replace(/^\{/, ",").slice(0, -1)},"mentions":`;
    const { keys } = this.context;
    const reply = (await runWorkspaceScript(
      this.context,
      "postChannel",
      [keys.state, keys.members, keys.channel, keys.mentions],
      [tail, sender, kind, byAgent ? "" : JSON.stringify(sender), ...parseMentions(text)],
      { member: sender },
    )) as [string, string, string[], string[], string[]];
    const [id, from, mentions = [], agents = [], unreached = []] = reply;
    return {
      post: { id, mentions, unreached },
      from,
      notify: mentions.map((member, index) => ({ member, agent: agents[index] ?? member })),
    };
  }

  /** Entries after `after` (all from the start without it), oldest first, at most `limit`. */
  async read(options: { after?: string | undefined; limit?: number } = {}): Promise<ChannelPage> {
    const entries = (await this.range(options)).map((entry) => this.decodeEntry(entry));
    return { entries, cursor: entries.at(-1)?.id ?? options.after };
  }

  /** As `read`; an entry that does not decode comes as `{ id, unreadable }` in its place. */
  async scan(options: { after?: string | undefined; limit?: number } = {}): Promise<{ entries: ChannelItem[] }> {
    return { entries: (await this.range(options)).map(decodeChannelItem) };
  }

  async lastId(): Promise<string | undefined> {
    const [newest] = (await this.context.redis.xrevrange(
      this.context.keys.channel,
      "+",
      "-",
      "COUNT",
      1,
    )) as StreamEntries;
    return newest?.[0];
  }

  private async range(options: { after?: string | undefined; limit?: number }): Promise<StreamEntries> {
    const limit = checkLimit(options.limit ?? DEFAULT_READ_LIMIT, "limit");
    // Nothing can follow the largest id (Redis refuses it as an exclusive start).
    if (options.after === LAST_STREAM_ID) return [];
    const start = options.after === undefined ? "-" : `(${checkCursor(options.after)}`;
    return (await this.context.redis.xrange(this.context.keys.channel, start, "+", "COUNT", limit)) as StreamEntries;
  }

  /** The newest `count` entries, oldest first. */
  async last(count: number): Promise<ChannelPage> {
    const raw = (await this.context.redis.xrevrange(
      this.context.keys.channel,
      "+",
      "-",
      "COUNT",
      checkLimit(count, "count"),
    )) as StreamEntries;
    const entries = raw.reverse().map((entry) => this.decodeEntry(entry));
    return { entries, cursor: entries.at(-1)?.id };
  }

  /** How many posts the channel holds. */
  async length(): Promise<number> {
    return this.context.redis.xlen(this.context.keys.channel);
  }

  /** The member's "last seen" cursor (undefined: nothing seen yet). */
  async seen(member: string): Promise<string | undefined> {
    return (await this.context.redis.hget(this.context.keys.seen, checkMember(member))) ?? undefined;
  }

  /** Entries after the member's "last seen" cursor; `markSeen` moves it once the member has them. */
  async unseen(member: string, limit = DEFAULT_READ_LIMIT): Promise<ChannelPage> {
    const after = await this.seen(member);
    return this.read({ ...(after !== undefined ? { after } : {}), limit });
  }

  /** Moves the member's cursor forward to `id` (never back); returns the cursor after the call. */
  async markSeen(member: string, id: string): Promise<string> {
    const reply = await runWorkspaceScript(
      this.context,
      "markSeen",
      [this.context.keys.seen],
      [checkMember(member), checkCursor(id, "id")],
      { member },
    );
    return String(reply);
  }

  /** The member's unread @mentions, oldest first (at most `limit`), and how many there are in all. */
  async inbox(member: string, limit = 50): Promise<{ entries: ChannelEntry[]; unread: number }> {
    checkMember(member);
    checkLimit(limit, "limit");
    const { redis, keys } = this.context;
    const [members, unread] = await Promise.all([
      redis.zrangebylex(keys.mentions, `[${member}:`, `(${member};`, "LIMIT", 0, limit),
      redis.zlexcount(keys.mentions, `[${member}:`, `(${member};`),
    ]);
    const ids = members.map((value) => entryIdOfPadded(value.slice(member.length + 1)));
    if (ids.length === 0) return { entries: [], unread };
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.xrange(keys.channel, id, id);
    const replies = (await pipeline.exec()) ?? [];
    const entries: ChannelEntry[] = [];
    for (const [error, raw] of replies) {
      if (error) throw error;
      const [entry] = raw as StreamEntries;
      if (entry) entries.push(this.decodeEntry(entry));
    }
    return { entries, unread };
  }

  /** Acknowledges unread mentions by entry id; returns how many were unread. */
  async ack(member: string, ids: readonly string[]): Promise<number> {
    checkMember(member);
    if (ids.length === 0) return 0;
    const values = ids.map((id) => `${member}:${paddedEntryId(checkCursor(id, "id"))}`);
    return this.context.redis.zrem(this.context.keys.mentions, ...values);
  }

  /** Acknowledges every unread mention up to and including `id`; returns how many. */
  async ackUpTo(member: string, id: string): Promise<number> {
    checkMember(member);
    const upTo = `[${member}:${paddedEntryId(checkCursor(id, "id"))}`;
    return this.context.redis.zremrangebylex(this.context.keys.mentions, `[${member}:`, upTo);
  }

  private decodeEntry(entry: [string, string[]]): ChannelEntry {
    return decodeChannelEntry(this.context.keys.channel, entry);
  }
}

/** One stream entry of the channel `key` as a post; a corrupt one is a CorruptEntryError naming the key and id. */
export function decodeChannelEntry(key: string, entry: [string, string[]]): ChannelEntry {
  const item = decodeChannelItem(entry);
  if ("unreadable" in item) throw corruptEntry(key, item.id, item.unreadable);
  return item;
}

/** One stream entry of a channel as a post, or, when it is not one, its id and why. */
export function decodeChannelItem([id, fields]: [string, string[]]): ChannelItem {
  const index = fields.indexOf(ENTRY_FIELD);
  const json = index >= 0 ? fields[index + 1] : undefined;
  const decoded = json !== undefined ? decode(channelPostSchema, json, "channel post") : undefined;
  if (!decoded?.ok) return { id, unreadable: decoded ? decoded.error.message : `no field '${ENTRY_FIELD}'` };
  return { id, ...decoded.value };
}
