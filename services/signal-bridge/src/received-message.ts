import { z } from "zod";

/**
 * The `data:` of one signal-cli SSE `receive` event (PROTOCOLS.md A3): the
 * bare `{envelope, account}` object. Only the fields the bridge reads are
 * declared; everything else passes through untouched, and null-valued or
 * missing optional members are both accepted.
 */
const mentionSchema = z.looseObject({
  number: z.string().nullish(),
  uuid: z.string().nullish(),
  start: z.number().optional(),
  length: z.number().optional(),
});

const attachmentSchema = z.looseObject({
  contentType: z.string().nullish(),
  filename: z.string().nullish(),
  id: z.string().nullish(),
  size: z.number().nullish(),
});

const dataMessageSchema = z.looseObject({
  timestamp: z.number(),
  message: z.string().nullish(),
  mentions: z.array(mentionSchema).nullish(),
  attachments: z.array(attachmentSchema).nullish(),
  groupInfo: z
    .looseObject({ groupId: z.string(), groupName: z.string().nullish(), type: z.string().nullish() })
    .nullish(),
  reaction: z.unknown().optional(),
  remoteDelete: z.unknown().optional(),
});

export const receivedMessageSchema = z.looseObject({
  envelope: z.looseObject({
    source: z.string().nullish(),
    sourceNumber: z.string().nullish(),
    sourceUuid: z.string().nullish(),
    sourceName: z.string().nullish(),
    timestamp: z.number(),
    dataMessage: dataMessageSchema.nullish(),
  }),
  account: z.string().nullish(),
  exception: z.looseObject({ message: z.string().nullish(), type: z.string().nullish() }).nullish(),
});
export type ReceivedMessage = z.output<typeof receivedMessageSchema>;
export type ReceivedAttachment = z.output<typeof attachmentSchema>;
