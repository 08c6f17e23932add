import { NoRespondersError, RequestTimeoutError } from "@moniro/bus";
import { decode, type Subjects, schedulerReplySchema, stamp } from "@moniro/envelopes";
import type { SchedulerClient } from "../ports.js";
import { NoSchedulerError } from "../routes/schedules.js";
import type { NatsLink } from "./nats-link.js";

/**
 * Requests on `<ns>.sched.<op>`, answered by a scheduler (its queue group).
 * No subscriber, or no reply within `timeoutMs`, is a NoSchedulerError (the routes' 503).
 */
export function natsSchedulerClient(
  link: NatsLink,
  subjects: Subjects,
  options: { timeoutMs: number },
): SchedulerClient {
  return {
    async request(request) {
      let bytes: Uint8Array;
      try {
        bytes = await link
          .get()
          .bus.request(subjects.sched(request.op), { ...stamp(), ...request }, { timeoutMs: options.timeoutMs });
      } catch (error) {
        if (error instanceof NoRespondersError) {
          throw new NoSchedulerError(`nothing subscribes to ${subjects.sched(request.op)}`);
        }
        if (error instanceof RequestTimeoutError) {
          throw new NoSchedulerError(`no reply within ${options.timeoutMs} ms (MONIRO_GATEWAY_CONTROL_TIMEOUT_MS)`);
        }
        throw error;
      }
      const reply = decode(schedulerReplySchema, bytes, "scheduler reply");
      if (!reply.ok) throw new Error(`the scheduler's reply is not a scheduler reply: ${reply.error.message}`);
      return reply.value;
    },
  };
}
