import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Cluster } from "ioredis";
import { isCluster, type RedisClient } from "../redis-client.js";

/**
 * The Lua scripts of `libs/store/lua/`, one file per script named
 * `verbNoun-<numKeys>.lua` (BullMQ style). The directory sits beside `src/`
 * and `dist/`, so the same relative path works from the sources (vitest) and
 * from the build (services).
 */
export const SCRIPT_FILES = {
  appendInbox: "appendInbox-2.lua",
  readInbox: "readInbox-3.lua",
  ackInbox: "ackInbox-3.lua",
  depthInbox: "depthInbox-3.lua",
  deleteEmptyInbox: "deleteEmptyInbox-3.lua",
  agentWork: "agentWork-5.lua",
  requeueInbox: "requeueInbox-3.lua",
  quarantineInbox: "quarantineInbox-2.lua",
  acquireLease: "acquireLease-2.lua",
  renewLease: "renewLease-1.lua",
  releaseLease: "releaseLease-1.lua",
  releaseIdle: "releaseIdle-5.lua",
  appendThread: "appendThread-8.lua",
  appendThreadRelease: "appendThreadRelease-8.lua",
  readThreadWindow: "readThreadWindow-3.lua",
  updateState: "updateState-1.lua",
  recordReport: "recordReport-1.lua",
  removeChild: "removeChild-1.lua",
  // One workflow instance's keys ({w:<workflow>:<tag>}): src/workspace/.
  startWorkspace: "startWorkspace-2.lua",
  stopWorkspace: "stopWorkspace-1.lua",
  discardWorkspace: "discardWorkspace-10.lua",
  postChannel: "postChannel-4.lua",
  readWorkspace: "readWorkspace-6.lua",
  markSeen: "markSeen-1.lua",
  writeDocument: "writeDocument-3.lua",
  createProposal: "createProposal-4.lua",
  voteProposal: "voteProposal-4.lua",
  announceProcess: "announceProcess-2.lua",
  // The same with the global index set in the script: for a single Redis only (see CROSS_SLOT_SCRIPTS).
  appendInboxIndexed: "appendInboxIndexed-3.lua",
  appendInboxMember: "appendInboxMember-5.lua",
  ackInboxIndexed: "ackInboxIndexed-4.lua",
  appendThreadIndexed: "appendThreadIndexed-10.lua",
  appendThreadReleaseIndexed: "appendThreadReleaseIndexed-10.lua",
  requeueInboxIndexed: "requeueInboxIndexed-4.lua",
  updateStateIndexed: "updateStateIndexed-2.lua",
  releaseIdleIndexed: "releaseIdleIndexed-6.lua",
} as const;

/**
 * Scripts that also write a global index set (`agents:pending`,
 * `agents:active`) beside one agent's keys: one round trip and no extra
 * commands per input on a single Redis, where slots do not matter. A cluster
 * would refuse them (CROSSSLOT), so `runScript` does too; the adapters write
 * the index with a command of its own there.
 */
const CROSS_SLOT_SCRIPTS: ReadonlySet<ScriptName> = new Set([
  "appendInboxIndexed",
  "appendInboxMember",
  "ackInboxIndexed",
  "appendThreadIndexed",
  "appendThreadReleaseIndexed",
  "requeueInboxIndexed",
  "updateStateIndexed",
  "releaseIdleIndexed",
]);

export type ScriptName = keyof typeof SCRIPT_FILES;

export interface Script {
  name: ScriptName;
  numberOfKeys: number;
  lua: string;
}

const LUA_DIR = new URL("../../lua/", import.meta.url);

let cache: Map<ScriptName, Script> | undefined;

/** Reads every script once (at first use) and checks each file name's key count. */
export function scripts(): Map<ScriptName, Script> {
  if (cache) return cache;
  const loaded = new Map<ScriptName, Script>();
  for (const [name, file] of Object.entries(SCRIPT_FILES) as Array<[ScriptName, string]>) {
    const match = /^[a-z][A-Za-z]*-(\d+)\.lua$/.exec(file);
    if (!match) throw new Error(`script file '${file}' must be named verbNoun-<numKeys>.lua`);
    const lua = withIncludes(readFileSync(new URL(file, LUA_DIR), "utf8"), file);
    loaded.set(name, { name, numberOfKeys: Number(match[1]), lua });
  }
  cache = loaded;
  return loaded;
}

/**
 * Replaces each line `--- @include "<name>"` with `lua/includes/<name>.lua`
 * (BullMQ's convention), so scripts share Lua functions instead of copies.
 */
function withIncludes(lua: string, file: string): string {
  return lua.replace(/^--- @include "([A-Za-z]+)"$/gm, (_line, name: string) => {
    try {
      return readFileSync(new URL(`includes/${name}.lua`, LUA_DIR), "utf8");
    } catch (error) {
      throw new Error(`${file}: cannot include '${name}' (lua/includes/${name}.lua): ${(error as Error).message}`);
    }
  });
}

/** Commands defined per client: ioredis keeps them on the instance (EVALSHA, falling back to EVAL on NOSCRIPT). */
const defined = new WeakSet<RedisClient>();

/**
 * Defines every script on a client. Call it before the client's first
 * command (connectRedis and createRedisStores do): with auto-pipelining,
 * ioredis 5 breaks a tick's pipeline when a command is defined after the
 * pipeline was created (a builtin issued earlier in the same tick), with an
 * uncaught "results[i] is not iterable". `runScript` still defines them on
 * first use for any other client.
 */
export function defineScripts(redis: RedisClient): void {
  ensureDefined(redis);
}

function ensureDefined(redis: RedisClient): void {
  if (defined.has(redis)) return;
  if (isCluster(redis)) {
    for (const script of scripts().values()) {
      redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  } else {
    defineDirect(redis);
  }
  defined.add(redis);
}

/**
 * A single Redis: each script becomes a plain method of the client that
 * sends EVALSHA (EVAL the first time on each connection, so a pipelined
 * batch never waits on a NOSCRIPT retry; EVALSHA's NOSCRIPT, a server that
 * lost its script cache, falls back to EVAL). Not ioredis's defineCommand:
 * ioredis copies every defined command onto each pipeline it creates, and
 * with auto-pipelining it creates one per tick that sends a command (issue
 * 17: with 30 scripts that copy was a few per cent of a runner's CPU). A
 * cluster keeps defineCommand, which tracks the loaded scripts per node.
 */
function defineDirect(redis: Exclude<RedisClient, Cluster>): void {
  let loaded = new Set<ScriptName>();
  // The next connection may reach a server that never saw the scripts (a restart, a failover).
  redis.on("close", () => {
    loaded = new Set();
  });
  for (const script of scripts().values()) {
    const sha = createHash("sha1").update(script.lua).digest("hex");
    const { name, lua, numberOfKeys } = script;
    const command: ScriptCommand = (...args) => {
      if (!loaded.has(name)) {
        loaded.add(name);
        return redis.eval(lua, numberOfKeys, ...args);
      }
      return redis.evalsha(sha, numberOfKeys, ...args).catch((error: unknown) => {
        if (!(error instanceof Error) || !error.message.includes("NOSCRIPT")) throw error;
        return redis.eval(lua, numberOfKeys, ...args);
      });
    };
    (redis as unknown as Record<string, ScriptCommand>)[name] = command;
  }
}

type ScriptCommand = (...args: Array<string | number>) => Promise<unknown>;

/**
 * Runs one script on a client. The key count is checked against the file
 * name, so a caller that passes the wrong keys fails here, not in Lua; and
 * every key must carry the same hash tag, so a script never spans slots (a
 * cluster would refuse it with CROSSSLOT, a single Redis would hide the bug).
 */
export async function runScript(
  redis: RedisClient,
  name: ScriptName,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  ensureDefined(redis);
  const script = scripts().get(name);
  if (!script) throw new Error(`unknown script '${name}'`);
  if (keys.length !== script.numberOfKeys) {
    throw new Error(`script '${name}' takes ${script.numberOfKeys} keys, got ${keys.length}`);
  }
  if (CROSS_SLOT_SCRIPTS.has(name)) {
    if (isCluster(redis))
      throw new Error(`script '${name}' writes a global index beside an agent's keys: single Redis only`);
  } else {
    const tag = hashTagOf(keys[0] ?? "");
    if (keys.some((key) => hashTagOf(key) !== tag)) {
      const tags = new Set(keys.map(hashTagOf));
      throw new Error(
        `script '${name}' was given keys of different hash tags (${[...tags].join(", ")}): ${keys.join(" ")}`,
      );
    }
  }
  const command = (redis as unknown as Record<string, ScriptCommand>)[name];
  if (typeof command !== "function") throw new Error(`script '${name}' is not defined on this client`);
  return command.call(redis, ...keys, ...args);
}

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
export function hashTagOf(key: string): string {
  const open = key.indexOf("{");
  if (open < 0) return key;
  const close = key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
