import { httpUserSchema } from "@moniro/envelopes";
import { z } from "zod";
import { error } from "./error-responses.js";
import { type ApiRoute, defineRoute } from "./route.js";

/** `POST /v1/send` body. The target is parsed by the gateway with `parseSendTarget` (@moniro/envelopes). */
export const sendBodySchema = z.strictObject({
  target: z
    .string({ error: "must be a string: 'alice' (a DM), '@review[:tag]' (a channel post) or 'alice@review[:tag]'" })
    .max(200, "must be at most 200 characters"),
  text: z
    .string({ error: "must be a string: the message" })
    .min(1, "must not be empty")
    .max(100_000, "must be at most 100,000 characters"),
  from: httpUserSchema,
});
export type SendBody = z.output<typeof sendBodySchema>;
export type SendBodyInput = z.input<typeof sendBodySchema>;

/** What a send did. */
export const sendResultSchema = z.object({
  /** The target in its canonical form (`@review:main` for `@review`). */
  target: z.string(),
  kind: z.enum(["dm", "channel", "workspace-agent"]),
  /** The inbound envelope's id (dm, workspace-agent) or the channel entry's id (channel). */
  id: z.string(),
  /** channel: the members the post @mentioned and woke. */
  mentions: z.array(z.string()).optional(),
  /** channel: @names that are not members; nobody was woken for them (the post is kept). */
  unreached: z.array(z.string()).optional(),
});
export type SendResult = z.output<typeof sendResultSchema>;

export const send = {
  send: defineRoute({
    id: "send",
    method: "post",
    path: "/v1/send",
    summary:
      "Send by target: 'alice' (a DM), '@review[:tag]' (a post to that workspace channel, as http:<from>), 'alice@review[:tag]' (alice, working in that workspace)",
    body: sendBodySchema,
    responses: {
      202: {
        description: "accepted: stored (the DM or input in JetStream, the post in the channel)",
        schema: sendResultSchema,
      },
      400: error(
        "invalid body or target (invalid_body, invalid_target), an oversized post (post_too_large), or the target's workflow file does not load (invalid_workflow)",
      ),
      404: error(
        "unknown agent (unknown_agent), or no workflow of the target's name is defined (unknown_workflow; the message lists the known ones)",
      ),
      409: error(
        "the workflow instance is not running (workflow_not_running) or the agent is not one of its members (not_a_participant); details.hint says how to fix it",
      ),
      503: error("NATS or Redis unavailable: nothing was accepted"),
    },
  }),
} as const;

/** Routes of this area (see README.md for which area holds what). */
export const sendRoutes: readonly ApiRoute[] = Object.values(send);
