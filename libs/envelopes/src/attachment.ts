import { z } from "zod";

/** Largest inline attachment once decoded; larger files travel by `url`. */
export const MAX_ATTACHMENT_BYTES = 256 * 1024;
const MAX_BASE64_CHARS = Math.ceil(MAX_ATTACHMENT_BYTES / 3) * 4;

/** Standard base64 (RFC 4648 §4): the 64-letter alphabet, '=' padding to a multiple of 4 characters. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Line breaks, control and format characters (bidi overrides, zero-width
 * spaces): the agent reads attachment names and urls in its prompt, so none of
 * them may start a line there or hide text.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;

const ALLOWED_SCHEMES = new Set(["http:", "https:"]);

/** What is wrong with an attachment url, or undefined when it is an absolute http(s) URL. */
function urlProblem(value: string): string | undefined {
  if (/\s/u.test(value) || INVISIBLE.test(value)) return "must not contain spaces, line breaks or control characters";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    return `scheme '${url.protocol}' is refused: only http:// and https:// URLs are allowed (not file:, data:, javascript: or ftp:); send small files inline as base64 'data'`;
  }
  return undefined;
}

/** Bytes a valid base64 string decodes to. */
function decodedLength(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * A file that travels with a message: a link the receiver can fetch (http or
 * https only) or small inline base64 `data`, never both. Every field is
 * checked where envelopes are decoded, so no producer can hand an agent a
 * `file:` link, undecodable data or a name that breaks its prompt.
 */
export const attachmentSchema = z
  .object({
    name: z
      .string()
      .min(1, "must not be empty")
      .max(256, "must be at most 256 characters")
      .refine((name) => !INVISIBLE.test(name), "must not contain line breaks or control characters"),
    contentType: z
      .string()
      .max(128, "must be at most 128 characters")
      .regex(
        /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(;[ -~]*)?$/,
        "must be a media type like 'text/plain' or 'image/png' (printable ASCII)",
      ),
    url: z
      .string()
      .max(2048, "must be at most 2048 characters")
      .superRefine((value, ctx) => {
        const problem = urlProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .meta({ description: "An absolute http:// or https:// URL; other schemes are refused." })
      .optional(),
    data: z
      .string()
      .max(
        MAX_BASE64_CHARS,
        `must be at most ${MAX_BASE64_CHARS} base64 characters (${MAX_ATTACHMENT_BYTES / 1024} KiB decoded); link larger files by 'url'`,
      )
      .regex(
        BASE64,
        "must be standard base64: A-Z, a-z, 0-9, '+' and '/', padded with '=' to a multiple of 4 characters, no line breaks",
      )
      .optional(),
    size: z.number().int().nonnegative().optional(),
  })
  .superRefine((attachment, ctx) => {
    const hasUrl = attachment.url !== undefined;
    const hasData = attachment.data !== undefined;
    if (hasUrl === hasData) {
      ctx.addIssue({
        code: "custom",
        path: [hasUrl ? "data" : "url"],
        message: hasUrl
          ? "give either 'url' or 'data', not both"
          : "an attachment needs 'url' (an http or https link) or 'data' (inline base64)",
      });
    }
    if (
      hasData &&
      attachment.size !== undefined &&
      BASE64.test(attachment.data ?? "") &&
      decodedLength(attachment.data ?? "") !== attachment.size
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["size"],
        message: `is ${attachment.size} but 'data' decodes to ${decodedLength(attachment.data ?? "")} bytes; leave it out or give the decoded size`,
      });
    }
  });
export type Attachment = z.infer<typeof attachmentSchema>;

/**
 * Attachments as threads stored them before these rules: history stays
 * readable, and new entries come only from envelopes checked by `attachmentSchema`.
 */
export const storedAttachmentSchema = z.object({
  name: z.string(),
  contentType: z.string(),
  url: z.string().optional(),
  data: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
});
