import {
  DecodeError,
  decode,
  type SchedulerReply,
  type SchedulerRequest,
  schedulerRequestSchema,
} from "@moniro/envelopes";
import { ScheduleError } from "./schedule-error.js";
import type { ScheduleStore } from "./schedule-store.js";

export type SchedulerOp = SchedulerRequest["op"];

export interface SchedulerOutcome {
  reply: SchedulerReply;
  /** Set when the request itself was invalid: the caller sends it to the DLQ. */
  rejected?: DecodeError;
}

/**
 * One `<ns>.sched.<op>` request → its reply. Never throws: invalid input and
 * failures become `{ ok: false, error }` naming the field or the cause.
 */
export async function handleSchedulerRequest(
  store: ScheduleStore,
  op: SchedulerOp,
  payload: Uint8Array | string,
): Promise<SchedulerOutcome> {
  const decoded = decode(schedulerRequestSchema, payload, "scheduler request");
  if (!decoded.ok) {
    return { reply: { ok: false, code: "invalid", error: decoded.error.message }, rejected: decoded.error };
  }
  const request = decoded.value;
  if (request.op !== op) {
    const error = new DecodeError("invalid scheduler request", [
      { path: "op", message: `must be '${op}' on the ${op} subject (got '${request.op}')` },
    ]);
    return { reply: { ok: false, code: "invalid", error: error.message }, rejected: error };
  }
  try {
    return { reply: await execute(store, request) };
  } catch (error) {
    if (error instanceof ScheduleError) return { reply: { ok: false, code: "invalid", error: error.message } };
    return { reply: { ok: false, code: "failed", error: `scheduler failed: ${(error as Error).message}` } };
  }
}

async function execute(store: ScheduleStore, request: SchedulerRequest): Promise<SchedulerReply> {
  switch (request.op) {
    case "upsert": {
      const { agent, job, schedule, reason } = request;
      return { ok: true, jobs: [await store.upsert({ agent, job, schedule, reason })] };
    }
    case "delete": {
      const { agent, job } = request;
      if (await store.delete(agent, job)) return { ok: true, jobs: [] };
      if (await store.definedByDefinition(agent, job)) {
        return {
          ok: false,
          code: "definition",
          error: `job: '${job}' of agent '${agent}' comes from the 'schedule' of its definition; edit or remove 'schedule' in the definition (${agent}.yaml) instead`,
        };
      }
      return { ok: false, code: "not_found", error: `job: no scheduled job '${job}' for agent '${agent}'` };
    }
    case "list":
      return { ok: true, jobs: await store.list(request.agent) };
  }
}
