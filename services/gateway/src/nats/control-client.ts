import { NoRespondersError, RequestTimeoutError } from "@moniro/bus";
import { type ControlEnvelopeInput, controlReplySchema, decode, type Subjects, stamp } from "@moniro/envelopes";
import type { ControlClient } from "../ports.js";
import { NoRunnerError } from "../routes/control.js";
import type { NatsLink } from "./nats-link.js";

/**
 * Control requests on `moniro.ctl.<agent>` through libs/bus. No subscriber,
 * or no reply within `timeoutMs`, is a NoRunnerError (the route's 503).
 */
export function natsControlClient(link: NatsLink, subjects: Subjects, options: { timeoutMs: number }): ControlClient {
  return {
    async request(agent, op, reason) {
      const request: ControlEnvelopeInput = { ...stamp(), agent, op, ...(reason ? { reason } : {}) };
      let bytes: Uint8Array;
      try {
        bytes = await link.get().bus.request(subjects.ctl(agent), request, { timeoutMs: options.timeoutMs });
      } catch (error) {
        if (error instanceof NoRespondersError) throw new NoRunnerError("nothing subscribes to its control subject");
        if (error instanceof RequestTimeoutError) {
          throw new NoRunnerError(`no reply within ${options.timeoutMs} ms (MONIRO_GATEWAY_CONTROL_TIMEOUT_MS)`);
        }
        throw error;
      }
      const reply = decode(controlReplySchema, bytes, "control reply");
      if (!reply.ok) throw new Error(`the agent-runner's reply is not a control reply: ${reply.error.message}`);
      return reply.value;
    },
  };
}
