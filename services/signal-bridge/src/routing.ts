import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { ConfigError } from "@moniro/config/service";
import { nameSchema } from "@moniro/envelopes";
import { z } from "zod";
import type { SignalBridgeConfig } from "./signal-config.js";

/** A sender: a +E.164 number, or a Signal uuid for contacts without a known number. */
const SENDER = /^(\+[1-9]\d{4,14}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const senderSchema = z.string().regex(SENDER, "must be a +E.164 phone number (e.g. +15551234567) or a Signal uuid");
/** Group ids as signal-cli prints them (`listGroups`): standard base64. */
const groupIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9+/]{4,}={0,2}$/, "must be a base64 group id as listGroups prints it");

export const routingFileSchema = z
  .object({
    /** The agent for every sender and group without a mapping. */
    default_agent: nameSchema.optional(),
    /** Senders let through without pairing. */
    allow: z.array(senderSchema).default([]),
    /** Direct messages from these senders go to the given agent (they are allowed too). */
    numbers: z.record(z.string(), nameSchema).default({}),
    /** Groups the bridge answers in: which agent, and whether it must be @mentioned. */
    groups: z
      .record(z.string(), z.strictObject({ agent: nameSchema.optional(), require_mention: z.boolean().default(true) }))
      .default({}),
    read_receipts: z.boolean().optional(),
    pairing: z.boolean().optional(),
  })
  .strict()
  .superRefine((file, ctx) => {
    // Keys are checked here so the error names the key (a record's own key check only says "Invalid key").
    for (const number of Object.keys(file.numbers)) {
      const problem = senderSchema.safeParse(number).error?.issues[0]?.message;
      if (problem) ctx.addIssue({ code: "custom", path: ["numbers", number], message: `the key ${problem}` });
    }
    for (const group of Object.keys(file.groups)) {
      const problem = groupIdSchema.safeParse(group).error?.issues[0]?.message;
      if (problem) ctx.addIssue({ code: "custom", path: ["groups", group], message: `the key ${problem}` });
    }
  });
export type RoutingFile = z.output<typeof routingFileSchema>;

export interface GroupRoute {
  agent: string;
  requireMention: boolean;
}

/** Who may talk to which agent: the environment merged with the optional YAML file. */
export interface Routing {
  defaultAgent: string;
  allow: ReadonlySet<string>;
  numbers: ReadonlyMap<string, string>;
  groups: ReadonlyMap<string, GroupRoute>;
  readReceipts: boolean;
  pairing: boolean;
}

/** Reads and validates the routing file; errors name the file and the field. */
export function readRoutingFile(
  file: string,
  read: (file: string) => string = (f) => readFileSync(f, "utf8"),
): RoutingFile {
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    throw new ConfigError(`MONIRO_SIGNAL_CONFIG_FILE: cannot read ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    // Loaded here, not at import: a bridge without a routing file never parses YAML (~0.7 MiB of heap).
    value = (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse(text) ?? {};
  } catch (error) {
    throw new ConfigError(`${file}: not valid YAML: ${(error as Error).message}`);
  }
  const parsed = routingFileSchema.safeParse(value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw new ConfigError(`invalid Signal configuration in ${file}:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/**
 * The routing of a bridge whose Signal is configured. The environment's
 * default agent wins over the file's; allowlists add up.
 */
export function resolveRouting(config: SignalBridgeConfig, file?: RoutingFile): Routing {
  const defaultAgent = config.MONIRO_SIGNAL_DEFAULT_AGENT ?? file?.default_agent;
  if (!defaultAgent) {
    throw new ConfigError(
      "MONIRO_SIGNAL_DEFAULT_AGENT: required while MONIRO_SIGNAL_URL is set (the agent Signal messages go to); or set default_agent in MONIRO_SIGNAL_CONFIG_FILE",
    );
  }
  for (const sender of config.MONIRO_SIGNAL_ALLOW) {
    if (!SENDER.test(sender)) {
      throw new ConfigError(
        `MONIRO_SIGNAL_ALLOW: '${sender}' must be a +E.164 phone number (e.g. +15551234567) or a Signal uuid, comma-separated`,
      );
    }
  }
  const numbers = new Map(Object.entries(file?.numbers ?? {}));
  const groups = new Map<string, GroupRoute>(
    Object.entries(file?.groups ?? {}).map(([id, group]) => [
      id,
      { agent: group.agent ?? defaultAgent, requireMention: group.require_mention },
    ]),
  );
  return {
    defaultAgent,
    allow: new Set([...config.MONIRO_SIGNAL_ALLOW, ...(file?.allow ?? []), ...numbers.keys()]),
    numbers,
    groups,
    readReceipts: file?.read_receipts ?? config.MONIRO_SIGNAL_READ_RECEIPTS,
    pairing: file?.pairing ?? config.MONIRO_SIGNAL_PAIRING,
  };
}

/**
 * The routing at start: the YAML file, when named, is read and checked even while Signal is off
 * (no MONIRO_SIGNAL_URL), so a broken file stops the bridge at start rather than when Signal is
 * turned on. The routing itself (which needs a default agent) exists only while Signal is on.
 */
export function loadRouting(config: SignalBridgeConfig, read?: (file: string) => string): Routing | undefined {
  const file = config.MONIRO_SIGNAL_CONFIG_FILE ? readRoutingFile(config.MONIRO_SIGNAL_CONFIG_FILE, read) : undefined;
  return config.MONIRO_SIGNAL_URL ? resolveRouting(config, file) : undefined;
}
