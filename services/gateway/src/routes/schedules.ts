import {
  addSchedule,
  addScheduleBodySchema,
  listSchedules,
  listSchedulesQuerySchema,
  removeSchedule,
  type ScheduleView,
  scheduleParamsSchema,
} from "@moniro/api";
import type { ScheduledJob, SchedulerReply } from "@moniro/envelopes";
import { Router } from "express";
import { knownAgent } from "../http/agent-param.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { validated } from "../http/validate.js";
import type { AgentCatalog, SchedulerAsk, SchedulerClient } from "../ports.js";

/** Raised by a SchedulerClient when no scheduler answers `<ns>.sched.<op>`. */
export class NoSchedulerError extends Error {
  override readonly name = "NoSchedulerError";
}

export function scheduleView(job: ScheduledJob): ScheduleView {
  return {
    agent: job.agent,
    id: job.job,
    source: job.source,
    schedule: job.schedule,
    text: job.reason,
    nextRunAt: job.nextRunAt ?? null,
  };
}

async function ask(client: SchedulerClient, request: SchedulerAsk): Promise<SchedulerReply> {
  try {
    return await client.request(request);
  } catch (error) {
    if (error instanceof NoSchedulerError) {
      throw new HttpError(
        503,
        "scheduler_unavailable",
        `no scheduler answered (${error.message}); schedules belong to the scheduler: start one and retry`,
        { "Retry-After": "2" },
      );
    }
    throw new HttpError(
      503,
      "nats_unavailable",
      `cannot reach NATS to ask the scheduler: ${(error as Error).message}`,
      {
        "Retry-After": "2",
      },
    );
  }
}

/** A refusal of the scheduler as the API's error. */
function refused(reply: SchedulerReply): HttpError {
  const message = reply.error ?? "the scheduler refused without a reason";
  switch (reply.code) {
    case "invalid":
      return new HttpError(400, "invalid_body", message);
    case "not_found":
      return new HttpError(404, "unknown_schedule", message);
    case "definition":
      return new HttpError(409, "schedule_in_definition", message);
    default:
      return new HttpError(503, "scheduler_unavailable", `the scheduler failed: ${message}`, { "Retry-After": "2" });
  }
}

/**
 * Schedules (docs/api.md "Schedules"), kept by the scheduler and asked over
 * `<ns>.sched.*`: `GET /v1/schedules[?agent=]`, `POST
 * /v1/agents/:agent/schedules` (add or replace by id), `DELETE
 * /v1/agents/:agent/schedules/:id`. The definition's own schedules are listed
 * with `source: definition` and cannot be removed here.
 */
export function schedulesRouter(deps: { agents: AgentCatalog; scheduler: SchedulerClient }): Router {
  const router = Router();

  router.get(listSchedules.path, async (request, response) => {
    const query = validated(listSchedulesQuerySchema, request.query, "query");
    const reply = await ask(deps.scheduler, { op: "list", ...(query.agent ? { agent: query.agent } : {}) });
    if (!reply.ok) throw refused(reply);
    response.status(200).json({ schedules: (reply.jobs ?? []).map(scheduleView) });
  });
  router.all(listSchedules.path, methodNotAllowed("GET"));

  router.post(addSchedule.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const body = validated(addScheduleBodySchema, request.body ?? {}, "body");
    const reply = await ask(deps.scheduler, {
      op: "upsert",
      agent,
      job: body.id,
      schedule: body.schedule,
      reason: body.text,
    });
    const job = reply.ok ? reply.jobs?.[0] : undefined;
    if (!job) throw refused(reply);
    response.status(201).json({ schedule: scheduleView(job) });
  });
  router.all(addSchedule.path, methodNotAllowed("POST"));

  router.delete(removeSchedule.path, async (request, response) => {
    const agent = await knownAgent(deps.agents, request.params.agent);
    const { id } = validated(scheduleParamsSchema.pick({ id: true }), request.params, "path");
    const reply = await ask(deps.scheduler, { op: "delete", agent, job: id });
    if (!reply.ok) throw refused(reply);
    response.status(200).json({ agent, id, removed: true });
  });
  router.all(removeSchedule.path, methodNotAllowed("DELETE"));

  return router;
}
