import type { Logger } from "@moniro/telemetry";

/** How many (channel, entry) pairs are remembered as logged: a corrupt entry is logged once, not per client. */
const REMEMBERED = 1_000;

/** Reports a channel entry that is not a post the gateway can decode. */
export type UnreadableEntryReporter = (workflow: string, tag: string, id: string, reason: string) => void;

/**
 * Logs at warn each channel entry that is not a post (written by something else, or by an older
 * version) as the channel's SSE stream meets it, once per gateway for the last REMEMBERED of them
 * however many clients read it: the stream reports it to its clients (`event: unreadable`) and
 * goes on after it (docs/api.md).
 */
export function unreadableEntryLog(logger: Pick<Logger, "warn">): UnreadableEntryReporter {
  const logged = new Set<string>();
  return (workflow, tag, id, reason) => {
    const key = `${workflow}\u0000${tag}\u0000${id}`;
    if (logged.has(key)) return;
    logged.add(key);
    if (logged.size > REMEMBERED) logged.delete(logged.values().next().value as string);
    logger.warn(
      { workflow, tag, entryId: id, err: reason },
      "skipping a channel entry that is not a post (its SSE clients are sent event: unreadable)",
    );
  };
}
