import { nameSchema } from "@moniro/envelopes";
import { z } from "zod";
import { error } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

/** What a stored delivery answers (docs/webhooks.md). */
export const hookAcceptedSchema = z.object({
  /** The inbound envelope's id: the same for a repeated delivery id, so the agent sees it once. */
  id: z.string(),
  /** The provider's delivery id (`X-GitHub-Delivery`, `X-Webhook-Delivery`), when it sent one. */
  delivery: z.string().optional(),
});

export const hooks = {
  receiveWebhook: defineRoute({
    id: "receiveWebhook",
    method: "post",
    path: "/v1/hooks/:name",
    summary:
      "A webhook delivery for the agent whose definition names the hook (docs/webhooks.md): JSON, or a form whose `payload` field is JSON; no API key, each hook checks its own signature or token",
    public: true,
    params: z.object({ name: nameSchema }),
    body: z.unknown().describe("the provider's payload (any JSON); a form body is also taken"),
    responses: {
      202: {
        description: "stored in JetStream (the agent reads it as `[webhook:<name>] <text>`)",
        schema: hookAcceptedSchema,
      },
      400: error("the body does not parse as its content type says (bad_json, bad_encoding, bad_request)"),
      401: error("a missing or wrong signature or token, or a timestamp outside the hook's window (`unauthorized`)"),
      404: error("no agent defines a hook of that name (`unknown_hook`)"),
      413: error(
        "the body is larger than the gateway's limit, or its envelope than NATS takes in one message (`body_too_large`)",
      ),
      415: error("neither JSON nor a form (`unsupported_media_type`)"),
      503: error(
        "the hook's secret is not configured on this gateway (`hook_unavailable`), or JetStream did not store the delivery (`nats_unavailable`): nothing was accepted",
      ),
    },
  }),
} as const;

/** Routes of this area (see README.md for which area holds what). */
export const hooksRoutes: readonly ApiRoute[] = Object.values(hooks);
