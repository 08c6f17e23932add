import { laneSchema, NAME_PATTERN } from "@moniro/envelopes";
import { z } from "zod";
import { strictObject } from "./strict-object.js";
import { compileTemplate, TemplateError } from "./webhook-template.js";

/**
 * How a webhook proves where it comes from: `github` (X-Hub-Signature-256 over
 * the raw body), `hmac` (X-Webhook-Signature over timestamp and body, with a
 * replay window), `bearer` (a per-hook token), or `none` (an explicit, logged
 * opt-out for a hook that anybody may call).
 */
export const WEBHOOK_AUTH = ["github", "hmac", "bearer", "none"] as const;
export type WebhookAuth = (typeof WEBHOOK_AUTH)[number];

/** The default replay window of `auth: hmac`, in seconds. */
export const DEFAULT_TOLERANCE_S = 300;
/** The default bound of a rendered payload, in characters. */
export const DEFAULT_MAX_CHARS = 4000;

/**
 * Names a hook's secret may not have: the services' own settings and credentials (`MONIRO_…`,
 * but `MONIRO_HOOK_…`, the prefix `moniro up` hands to the gateway) and the runtime's (`NODE_…`,
 * `OTEL_…`). A hook naming `MONIRO_REDIS_PASSWORD` would make whoever signs its deliveries a
 * holder of that password. The Helm chart refuses the same names in `webhooks.secrets`.
 */
const RESERVED_ENV = /^(?:MONIRO_(?!HOOK_)|NODE_|OTEL_)/;

const envName = (example: string) =>
  z
    .string()
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]{0,127}$/,
      `must be the name of an environment variable of the gateway (letters, digits, '_'), e.g. ${example}; the secret itself never goes into a file`,
    )
    .refine((name) => !RESERVED_ENV.test(name), {
      error: (issue) =>
        `'${String(issue.input)}' is one of the services' own settings (MONIRO_…, NODE_…, OTEL_…): a hook's secret is a variable of its own, e.g. ${example}, or MONIRO_HOOK_<name> (the prefix \`moniro up\` hands to the gateway)`,
    });

const wholeNumber = (what: string) => z.number().int(`must be a whole number (${what})`);

const webhookSchema = strictObject({
  auth: z.enum(WEBHOOK_AUTH, { error: `must be one of ${WEBHOOK_AUTH.join(", ")}` }),
  /** github, hmac: the environment variable holding the shared secret. */
  secret_env: envName("GITHUB_WEBHOOK_SECRET").optional(),
  /** bearer: the environment variable holding the token callers send as `Authorization: Bearer <token>`. */
  token_env: envName("DEPLOY_HOOK_TOKEN").optional(),
  /** hmac: how far X-Webhook-Timestamp may be from the gateway's clock. */
  tolerance_s: wholeNumber("seconds").min(1).max(86_400).optional(),
  /** The lane of the input (default: background, as for every webhook). */
  priority: laneSchema.optional(),
  /** Payload → text; without one the agent reads the payload as compact JSON. */
  template: z
    .string()
    .min(1, "must not be empty: remove it to get the payload as compact JSON")
    .max(10_000)
    .superRefine((template, ctx) => {
      try {
        compileTemplate(template);
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        ctx.addIssue({ code: "custom", message: error.message });
      }
    })
    .optional(),
  /** The longest text the agent gets from one delivery; longer is cut with a marker. */
  max_chars: wholeNumber("characters").min(100).max(100_000).optional(),
  /** Free text for people reading the file. */
  description: z.string().optional(),
}).superRefine((hook, ctx) => {
  const needsSecret = hook.auth === "github" || hook.auth === "hmac";
  if (needsSecret && hook.secret_env === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["secret_env"],
      message: `is required with 'auth: ${hook.auth}': name the environment variable that holds the shared secret, e.g. 'secret_env: GITHUB_WEBHOOK_SECRET'`,
    });
  }
  if (!needsSecret && hook.secret_env !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["secret_env"],
      message: `is used only with 'auth: github' or 'auth: hmac'; remove it${hook.auth === "bearer" ? " (a bearer hook names its token with token_env)" : ""}`,
    });
  }
  if (hook.auth === "bearer" && hook.token_env === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["token_env"],
      message:
        "is required with 'auth: bearer': name the environment variable that holds the token, e.g. 'token_env: DEPLOY_HOOK_TOKEN'",
    });
  }
  if (hook.auth !== "bearer" && hook.token_env !== undefined) {
    ctx.addIssue({ code: "custom", path: ["token_env"], message: "is used only with 'auth: bearer'; remove it" });
  }
  if (hook.auth !== "hmac" && hook.tolerance_s !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["tolerance_s"],
      message: "is used only with 'auth: hmac' (the scheme with a timestamp); remove it",
    });
  }
});

/**
 * `webhooks:` in `.agents/<name>.yaml`: hook name → definition. Each hook
 * delivers to the agent of its file, at `POST /v1/hooks/<hook name>`.
 */
export const webhooksSchema = z.record(z.string(), webhookSchema).superRefine((hooks, ctx) => {
  for (const name of Object.keys(hooks)) {
    if (!NAME_PATTERN.test(name)) {
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `'${name.slice(0, 80)}' is not a hook name: use 1-63 characters of a-z, 0-9, '_' or '-', starting with a letter or digit (it is the URL's /v1/hooks/<name> and the agent sees [webhook:<name>])`,
      });
    }
  }
});
export type WebhookDefinition = z.output<typeof webhookSchema>;
export type WebhookDefinitions = z.output<typeof webhooksSchema>;
