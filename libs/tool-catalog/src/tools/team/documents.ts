import { documentNameSchema } from "@moniro/envelopes";
import { z } from "zod";
import { defineTool, ok } from "../../tool.js";
import { seatOf } from "./seat-of.js";

export const teamDocListTool = defineTool({
  name: "team_doc_list",
  description: "The shared documents of this workspace: name, version, size, who wrote last.",
  input: z.object({}).strict(),
  usesWorkspace: false,
  team: true,
  async run(_input, ctx) {
    const { seat } = seatOf(ctx);
    const documents = await seat.instance.documents.list();
    if (documents.length === 0) return ok({ documents }, "No documents yet.");
    const lines = documents.map(
      (doc) =>
        `${doc.name} (v${doc.version}, ${doc.bytes} bytes, by ${doc.updatedBy} at ${new Date(doc.updatedAt).toISOString()})`,
    );
    return ok({ documents }, lines.join("\n"));
  },
});

export const teamDocReadTool = defineTool({
  name: "team_doc_read",
  description: "Read a shared document of this workspace (its text and version).",
  input: z.object({ name: documentNameSchema }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    const { seat } = seatOf(ctx);
    const doc = await seat.instance.documents.read(input.name);
    return ok(doc, `${doc.name} v${doc.version} (by ${doc.updatedBy}):\n${doc.text}`);
  },
});

export const teamDocWriteTool = defineTool({
  name: "team_doc_write",
  description:
    "Write a shared document of this workspace: replace its text (mode 'set', the default) or append to it. Pass ifVersion to write only if nobody changed it since you read it (0: only if it does not exist).",
  input: z.object({
    name: documentNameSchema,
    text: z.string(),
    mode: z.enum(["set", "append"]).optional(),
    ifVersion: z.number().int().min(0).optional().describe("The version you read; 0 to create only"),
  }),
  usesWorkspace: false,
  team: true,
  async run(input, ctx) {
    const { seat } = seatOf(ctx);
    const written = await seat.instance.documents.write(input.name, input.text, {
      by: seat.member.name,
      ...(input.mode === undefined ? {} : { mode: input.mode }),
      ...(input.ifVersion === undefined ? {} : { ifVersion: input.ifVersion }),
    });
    return ok({ name: input.name, ...written }, `${input.name} is now v${written.version} (${written.bytes} bytes).`);
  },
});
