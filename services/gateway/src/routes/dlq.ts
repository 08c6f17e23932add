import { dlqSeqParamsSchema, listDlq, listDlqQuerySchema, replayDlq } from "@moniro/api";
import type { Subjects } from "@moniro/envelopes";
import { Router } from "express";
import { deadLetterView, replayPlan } from "../http/dead-letter-view.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { validated } from "../http/validate.js";
import type { AgentCatalog, DeadLetterQueue } from "../ports.js";

function natsDown(what: string, error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  return new HttpError(503, "nats_unavailable", `cannot ${what}: ${(error as Error)?.message ?? error}`, {
    "Retry-After": "2",
  });
}

/**
 * The dead-letter queue (docs/api.md "Dead letters"): `GET /v1/dlq` pages
 * MONIRO_DLQ oldest first; `POST /v1/dlq/:seq/replay` publishes the entry's
 * envelope again on its original subject, after checking it, with the
 * message id `replay:<stream>:<seq>` (a repeated replay within JetStream's
 * duplicate window is stored once), then deletes the entry: replaying it again
 * answers 404.
 */
export function dlqRouter(deps: { agents: AgentCatalog; dlq: DeadLetterQueue; subjects: Subjects }): Router {
  const router = Router();

  router.get(listDlq.path, async (request, response) => {
    const query = validated(listDlqQuerySchema, request.query, "query");
    const page = await deps.dlq
      .list(query.after ?? 0, query.limit)
      .catch((error: unknown) => Promise.reject(natsDown("read the DLQ", error)));
    const entries = page.records.map((record) => deadLetterView(record, deps.subjects));
    response.status(200).json({ entries, next: page.more ? (entries.at(-1)?.seq ?? null) : null });
  });
  router.all(listDlq.path, methodNotAllowed("GET"));

  router.post(replayDlq.path, async (request, response) => {
    const { seq } = validated(dlqSeqParamsSchema, request.params, "path");
    const stored = await deps.dlq.get(seq).catch((error: unknown) => Promise.reject(natsDown("read the DLQ", error)));
    if (!stored) {
      throw new HttpError(
        404,
        "unknown_dlq_entry",
        `no DLQ entry ${seq}: it never existed, expired, or was replayed already; GET /v1/dlq lists what is there`,
      );
    }
    const entry = deadLetterView(stored, deps.subjects);
    const plan = replayPlan(entry, deps.subjects);
    if (!plan.ok) throw new HttpError(422, "not_replayable", plan.message, {}, { issues: plan.issues });
    if (plan.agent !== undefined && !(await deps.agents.has(plan.agent))) {
      throw new HttpError(
        422,
        "not_replayable",
        `entry ${seq} is for agent '${plan.agent}', which is not defined; define it first, then replay`,
      );
    }
    const stream = deps.subjects.streams.dlq;
    const published = await deps.dlq
      .republish(plan.subject, plan.payload, `replay:${stream}:${seq}`)
      .catch((error: unknown) => Promise.reject(natsDown(`publish entry ${seq} again`, error)));
    // Published: the entry goes. Should the delete fail, a retried replay is deduplicated by its message id.
    await deps.dlq.remove(seq).catch(() => false);
    response.status(200).json({
      seq,
      subject: plan.subject,
      stream: published.stream,
      streamSeq: published.seq,
      envelopeId: plan.envelopeId,
      duplicate: published.duplicate,
    });
  });
  router.all(replayDlq.path, methodNotAllowed("POST"));

  return router;
}
