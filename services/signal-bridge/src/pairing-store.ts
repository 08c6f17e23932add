import { randomInt } from "node:crypto";
import { type PairingEntry, pairingEntrySchema, parseJson } from "@moniro/envelopes";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";

/** Pairing state every bridge replica shares and that survives restarts. */
export interface PairingStore {
  /** The sender's record, if it ever asked to pair. */
  get(sender: string): Promise<PairingEntry | undefined>;
  /** The pending record of a sender, created with a new code unless one exists (`created` says which). */
  request(sender: string, name?: string): Promise<{ entry: PairingEntry; created: boolean }>;
  /** Pending requests, oldest first. */
  pending(): Promise<PairingEntry[]>;
  /** Approves or denies the pending request with `code`; undefined when no such pending request. */
  decide(code: string, status: "approved" | "denied"): Promise<PairingEntry | undefined>;
}

const CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

function newCode(): string {
  let code = "";
  for (let i = 0; i < 8; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** KV keys allow `[-/_=.a-zA-Z0-9]`: a sender (`+1555…` or a uuid) is base64url-encoded. */
const senderKey = (sender: string) => `sender.${Buffer.from(sender).toString("base64url")}`;
const codeKey = (code: string) => `code.${code}`;

/** The KV bucket of a namespace: `moniro_signal_pairing` in production. */
export function pairingBucketName(namespace: string): string {
  return `${namespace}_signal_pairing`;
}

function entryOf(value: Uint8Array | undefined): PairingEntry | undefined {
  if (!value) return undefined;
  const parsed = parseJson(value);
  if (!parsed.ok) return undefined;
  const entry = pairingEntrySchema.safeParse(parsed.value);
  return entry.success ? entry.data : undefined;
}

/**
 * Pairing state in a NATS KV bucket (JetStream, file storage): one
 * `sender.<base64url>` record per sender and a `code.<CODE>` index to it.
 * `create` (which fails when the key exists) keeps two replicas from giving
 * one sender two codes.
 */
export async function kvPairingStore(
  nc: NatsConnection,
  namespace: string,
  now: () => number = Date.now,
): Promise<PairingStore> {
  const kv: KV = await new Kvm(nc).create(pairingBucketName(namespace), { history: 1 });

  async function read(key: string): Promise<PairingEntry | undefined> {
    const stored = await kv.get(key);
    if (stored?.operation !== "PUT") return undefined;
    return entryOf(stored.value);
  }

  async function senderOfCode(code: string): Promise<string | undefined> {
    const stored = await kv.get(codeKey(code));
    if (stored?.operation !== "PUT") return undefined;
    return stored.string();
  }

  return {
    get: (sender) => read(senderKey(sender)),

    async request(sender, name) {
      const existing = await read(senderKey(sender));
      if (existing) return { entry: existing, created: false };
      const entry: PairingEntry = {
        code: newCode(),
        sender,
        status: "pending",
        requestedAt: new Date(now()).toISOString(),
        ...(name ? { name } : {}),
      };
      try {
        await kv.put(codeKey(entry.code), sender);
        await kv.create(senderKey(sender), JSON.stringify(entry));
        return { entry, created: true };
      } catch (error) {
        // Another replica created it first: its code is the one that counts.
        await kv.delete(codeKey(entry.code)).catch(() => undefined);
        const winner = await read(senderKey(sender));
        if (winner) return { entry: winner, created: false };
        throw error;
      }
    },

    async pending() {
      const keys: string[] = [];
      for await (const key of await kv.keys("sender.>")) keys.push(key);
      const entries = await Promise.all(keys.map((key) => read(key)));
      return entries
        .filter((entry): entry is PairingEntry => entry?.status === "pending")
        .sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
    },

    async decide(code, status) {
      const sender = await senderOfCode(code);
      if (!sender) return undefined;
      const entry = await read(senderKey(sender));
      if (entry?.status !== "pending" || entry.code !== code) return undefined;
      const decided: PairingEntry = { ...entry, status, decidedAt: new Date(now()).toISOString() };
      await kv.put(senderKey(sender), JSON.stringify(decided));
      await kv.delete(codeKey(code));
      return decided;
    },
  };
}
