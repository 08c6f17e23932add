import { NoRespondersError, RequestTimeoutError } from "@moniro/bus";
import { decode, pairingReplySchema, type Subjects } from "@moniro/envelopes";
import { NoSignalBridgeError, type PairingClient } from "../routes/pairing.js";
import type { NatsLink } from "./nats-link.js";

/** Pairing requests on `<ns>.signal.pairing`, answered by a signal-bridge. */
export function natsPairingClient(link: NatsLink, subjects: Subjects, options: { timeoutMs: number }): PairingClient {
  return {
    async request(request) {
      let bytes: Uint8Array;
      try {
        bytes = await link.get().bus.request(subjects.signalPairing, request, { timeoutMs: options.timeoutMs });
      } catch (error) {
        if (error instanceof NoRespondersError)
          throw new NoSignalBridgeError("nothing subscribes to its pairing subject");
        if (error instanceof RequestTimeoutError)
          throw new NoSignalBridgeError(`no reply within ${options.timeoutMs} ms`);
        throw error;
      }
      const reply = decode(pairingReplySchema, bytes, "pairing reply");
      if (!reply.ok) throw new Error(`the signal-bridge's reply is not a pairing reply: ${reply.error.message}`);
      return reply.value;
    },
  };
}
