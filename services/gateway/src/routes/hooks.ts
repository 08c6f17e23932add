import type { InboundEnvelope } from "@moniro/envelopes";
import { ENVELOPE_VERSION, NAME_PATTERN } from "@moniro/envelopes";
import type { Tracing } from "@moniro/ports";
import { type Request, Router } from "express";
import { deliveryIdOf, envelopeIdFor, freshEnvelopeId } from "../hooks/delivery-id.js";
import { hookPayload, rawHookBody } from "../hooks/hook-body.js";
import { type HookCatalog, isBroken } from "../hooks/hook-catalog.js";
import { payloadText } from "../hooks/payload-text.js";
import { verifyDelivery } from "../hooks/verify-delivery.js";
import { HttpError } from "../http/http-error.js";
import { methodNotAllowed } from "../http/method-not-allowed.js";
import { notStored } from "../http/not-stored.js";
import type { GatewayLogger, InboundPublisher } from "../ports.js";

/** The event name a provider sends (`push`, `pull_request`), if it is a plain token. */
function eventOf(request: Request): string | undefined {
  const value = request.get("x-github-event") ?? request.get("x-webhook-event");
  return value !== undefined && /^[A-Za-z0-9._:-]{1,100}$/.test(value) ? value : undefined;
}

/**
 * `POST /v1/hooks/:name`: a provider's delivery becomes an inbound envelope
 * (`source` = `webhook:<name>`, context `personal`, so it lands in the thread
 * the agent's DMs use) on `moniro.in.<agent>`. The 202 is sent once JetStream
 * stored it, before any agent runs. The route needs no API key: each hook
 * authenticates its caller itself (signature or token, docs/webhooks.md), and
 * every refusal (401, 404, 413, 415, 400) happens before anything is published.
 * A repeated delivery id yields the same envelope id, which is deduplicated
 * downstream, so the agent sees the delivery once.
 */
export function hooksRouter(deps: {
  hooks: HookCatalog;
  publisher: InboundPublisher;
  tracing: Tracing;
  logger: GatewayLogger;
  bodyLimitBytes: number;
  now: () => number;
}): Router {
  const router = Router();
  const readBody = rawHookBody(deps.bodyLimitBytes);
  router.post("/v1/hooks/:name", async (request, response) => {
    const name = request.params.name ?? "";
    const hook = NAME_PATTERN.test(name) ? await deps.hooks.get(name) : undefined;
    if (hook === undefined) {
      throw new HttpError(
        404,
        "unknown_hook",
        `no webhook named '${name.slice(0, 63)}': define it under 'webhooks:' in its agent's .agents/<agent>.yaml (docs/webhooks.md)`,
      );
    }
    if (isBroken(hook)) {
      throw new HttpError(
        503,
        "hook_unavailable",
        `webhook '${name}' is defined but not usable on this gateway (its secret is not configured); the gateway log says what to fix`,
        { "Retry-After": "60" },
      );
    }
    const now = deps.now();
    // A token needs no body: an unauthenticated caller is refused before the body is read.
    if (hook.auth.kind === "bearer")
      verifyDelivery(name, hook.auth, { headers: request.headers, body: Buffer.alloc(0) }, now);
    const body = await readBody(request, response);
    verifyDelivery(name, hook.auth, { headers: request.headers, body }, now);
    const deliveryId = deliveryIdOf(request.headers);
    const payload = hookPayload(request.get("content-type"), body);
    const event = eventOf(request);
    // Without a delivery id, a signed generic delivery is identified by its signature: a byte-identical replay is one delivery.
    const signature = hook.auth.kind === "hmac" ? request.get("x-webhook-signature")?.trim() : undefined;
    const key = deliveryId ?? (signature !== undefined ? `signature:${signature}` : undefined);
    const source = `webhook:${name}`;
    const envelope: InboundEnvelope = {
      v: ENVELOPE_VERSION,
      id: key !== undefined ? envelopeIdFor(name, key) : freshEnvelopeId(now),
      ts: new Date(now).toISOString(),
      agent: hook.agent,
      source,
      context: "personal",
      priority: hook.priority,
      replyTo: source,
      text: payloadText(payload, {
        ...(hook.template ? { template: hook.template } : {}),
        facts: {
          $hook: name,
          ...(event !== undefined ? { $event: event } : {}),
          ...(deliveryId !== undefined ? { $delivery: deliveryId } : {}),
        },
        maxChars: hook.maxChars,
      }),
      attachments: [],
      meta: {
        webhook: name,
        ...(deliveryId !== undefined ? { delivery: deliveryId } : {}),
        ...(event !== undefined ? { event } : {}),
      },
    };
    await deps.tracing.span(
      "gateway.publish webhook",
      { "moniro.agent": hook.agent, "moniro.envelope.id": envelope.id, "moniro.source": source },
      () =>
        deps.publisher.publish(envelope).catch((error: unknown) => {
          throw notStored(error, "the delivery");
        }),
    );
    if (hook.auth.kind === "none") {
      deps.logger.info(
        { hook: name, id: envelope.id },
        "accepted a delivery on an unauthenticated webhook (auth: none)",
      );
    }
    response.status(202).json({ id: envelope.id, ...(deliveryId !== undefined ? { delivery: deliveryId } : {}) });
  });
  router.all("/v1/hooks/:name", methodNotAllowed("POST"));
  return router;
}
