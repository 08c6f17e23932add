import { subscribeEnvelopes } from "@moniro/bus";
import { type PairingReply, pairingRequestSchema, type Subjects } from "@moniro/envelopes";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "./logger.js";
import type { PairingStore } from "./pairing-store.js";
import type { SignalRpc } from "./signal-rpc.js";

/** Told to a sender once an operator approved them. */
export const APPROVED_TEXT = "You are approved: your messages now reach the assistant.";

/**
 * Answers `<ns>.signal.pairing` (queue group `signal-bridge`: one replica per
 * request): list pending requests, approve or deny one by its code. The
 * gateway's `/v1/pairing` routes and `moniro pairing` ask here.
 */
export function answerPairing(deps: {
  nc: NatsConnection;
  subjects: Subjects;
  store: PairingStore;
  rpc: SignalRpc;
  logger: Logger;
}): Subscription {
  return subscribeEnvelopes({
    nc: deps.nc,
    subject: deps.subjects.signalPairing,
    queue: "signal-bridge",
    schema: pairingRequestSchema,
    origin: "signal",
    subjects: deps.subjects,
    what: "pairing request",
    logger: deps.logger,
    invalidReply: (error): PairingReply => ({ ok: false, error: "invalid_request", message: error.message }),
    handler: async (request): Promise<PairingReply> => {
      if (request.op === "list") return { ok: true, pending: await deps.store.pending() };
      const status = request.op === "approve" ? "approved" : "denied";
      const entry = await deps.store.decide(request.code, status);
      if (!entry) {
        return {
          ok: false,
          error: "unknown_code",
          message: `no pending pairing request has code ${request.code}; 'moniro pairing list' shows the pending ones`,
        };
      }
      deps.logger.info({ sender: entry.sender, code: entry.code, status }, `Signal sender ${status}`);
      if (status === "approved") {
        await deps.rpc.call("send", { recipient: [entry.sender], message: APPROVED_TEXT }).catch((error: unknown) => {
          deps.logger.warn({ err: (error as Error).message }, "could not tell the sender they are approved");
        });
      }
      return { ok: true, entry };
    },
  });
}
