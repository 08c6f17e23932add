import { DOCUMENT_NAME_PATTERN, type DocumentMeta, decode, documentMetaSchema } from "@moniro/envelopes";
import { corruptEntry, errorFromCode } from "../errors.js";
import { posterKind, runWorkspaceScript, type WorkspaceContext } from "./workspace-context.js";
import { WorkspaceError } from "./workspace-error.js";
import type { Document, DocumentInfo, Documents, WriteDocumentOptions } from "./workspace-port.js";

export function checkDocumentName(name: string): string {
  if (!DOCUMENT_NAME_PATTERN.test(name)) {
    throw new WorkspaceError(
      "bad_document_name",
      `document name '${name}' must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. 'plan.md')`,
      { document: name },
    );
  }
  return name;
}

/** A write's name, writer, size and `ifVersion`, checked before anything is written. */
export function checkDocumentWrite(name: string, text: string, options: WriteDocumentOptions, maxBytes: number): void {
  checkDocumentName(name);
  posterKind(options.by);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    throw new WorkspaceError(
      "document_too_large",
      `document '${name}' would be ${bytes} bytes, more than the ${maxBytes} one document may hold: split it into several documents`,
      { document: name, bytes, limit: maxBytes },
    );
  }
  const ifVersion = options.ifVersion;
  if (ifVersion !== undefined && (!Number.isInteger(ifVersion) || ifVersion < 0)) {
    throw new WorkspaceError("version_conflict", `ifVersion must be a whole number, 0 or more (got ${ifVersion})`, {
      document: name,
    });
  }
}

/**
 * The shared documents of one instance: text by name, with a version per
 * document, a size limit per document and a limit on their number (checked
 * atomically with the write, `writeDocument-3.lua`).
 */
export class WorkspaceDocuments implements Documents {
  constructor(private readonly context: WorkspaceContext) {}

  /** Every document's name and metadata, by name. */
  async list(): Promise<DocumentInfo[]> {
    return documentsOf(this.context.keys.docMeta, await this.context.redis.hgetall(this.context.keys.docMeta));
  }

  /** One document, or a WorkspaceError `unknown_document` naming the ones there are. */
  async read(name: string): Promise<Document> {
    checkDocumentName(name);
    const { redis, keys } = this.context;
    const [text, meta] = await Promise.all([redis.hget(keys.docs, name), redis.hget(keys.docMeta, name)]);
    if (text === null || meta === null) {
      const names = (await redis.hkeys(keys.docMeta)).sort();
      throw new WorkspaceError(
        "unknown_document",
        `${this.context.workflow}:${this.context.tag} has no document '${name}' (${names.length > 0 ? `documents: ${names.join(", ")}` : "it has no documents yet"})`,
        { document: name },
      );
    }
    return { name, text, ...this.decodeMeta(name, meta) };
  }

  /** Writes a document of a running instance; returns its new version and size in bytes. */
  async write(name: string, text: string, options: WriteDocumentOptions): Promise<{ version: number; bytes: number }> {
    checkDocumentWrite(name, text, options, this.context.limits.maxDocumentBytes);
    const { keys, limits, clock } = this.context;
    const ifVersion = options.ifVersion;
    const reply = (await runWorkspaceScript(
      this.context,
      "writeDocument",
      [keys.state, keys.docs, keys.docMeta],
      [
        name,
        text,
        options.mode ?? "set",
        JSON.stringify(options.by),
        clock.now(),
        limits.maxDocumentBytes,
        limits.maxDocuments,
        ifVersion === undefined ? "" : ifVersion,
      ],
      { document: name, limit: limits.maxDocuments, maxBytes: limits.maxDocumentBytes },
    )) as [number, number];
    if (reply[0] < 0) {
      throw errorFromCode(reply[0], {
        script: "writeDocument",
        workspace: { workflow: this.context.workflow, tag: this.context.tag, document: name, version: reply[1] },
      });
    }
    return { version: reply[0], bytes: reply[1] };
  }

  private decodeMeta(name: string, json: string): DocumentMeta {
    return decodeDocumentMeta(this.context.keys.docMeta, name, json);
  }
}

function decodeDocumentMeta(key: string, name: string, json: string): DocumentMeta {
  const decoded = decode(documentMetaSchema, json, "document metadata");
  if (!decoded.ok) throw corruptEntry(key, name, decoded.error.message);
  return decoded.value;
}

/** The documents of a doc-meta hash (`key`, name → metadata JSON), by name. */
export function documentsOf(key: string, hash: Record<string, string>): DocumentInfo[] {
  return Object.entries(hash)
    .map(([name, json]) => ({ name, ...decodeDocumentMeta(key, name, json) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}
