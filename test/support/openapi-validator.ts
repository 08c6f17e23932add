import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";

type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats: FormatsPlugin =
  (formats as unknown as { default?: FormatsPlugin }).default ?? (formats as unknown as FormatsPlugin);

const DOCUMENT_ID = "https://moniro.invalid/openapi.json";

/** `~` and `/` escaped for a JSON pointer token. */
const pointerToken = (token: string) => token.replaceAll("~", "~0").replaceAll("/", "~1");

export interface OpenApiOperation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

export interface OpenApiDocumentJson {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: Record<string, unknown>;
}

/**
 * A copy of `value` in which every object schema that lists `properties` and
 * says nothing about others refuses them (`unevaluatedProperties: false`): a
 * field the gateway sends but the document does not describe is a failure.
 */
function closeObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closeObjects);
  if (!value || typeof value !== "object") return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, closeObjects(inner)]));
  const open = !("additionalProperties" in copy) && !("unevaluatedProperties" in copy);
  if (open && copy.type === "object" && copy.properties && typeof copy.properties === "object") {
    copy.unevaluatedProperties = false;
  }
  return copy;
}

/**
 * Validates real answers against an OpenAPI 3.1 document (its JSON Schema
 * 2020-12 dialect) with ajv: the status must be documented for the operation,
 * and the body must match that status's schema, `$ref`s into the document's
 * components resolved. Objects are taken as closed: an undocumented field fails.
 */
export function openApiValidator(document: OpenApiDocumentJson) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...(closeObjects(document) as OpenApiDocumentJson), $id: DOCUMENT_ID });
  return {
    operation(path: string, method: string): OpenApiOperation | undefined {
      return document.paths[path]?.[method];
    },
    /** Problems with one answer (empty when it conforms). */
    check(path: string, method: string, answer: { status: number; contentType: string; body: unknown }): string[] {
      const operation = document.paths[path]?.[method];
      if (!operation) return [`${method.toUpperCase()} ${path} is not in the document`];
      const response = operation.responses[String(answer.status)];
      if (!response) {
        return [
          `status ${answer.status} is not documented (documented: ${Object.keys(operation.responses).join(", ")})`,
        ];
      }
      const media = Object.keys(response.content ?? {});
      if (media.length === 0) return [];
      const type = media.find((candidate) => answer.contentType.startsWith(candidate));
      if (!type)
        return [`content-type '${answer.contentType}' is not documented for ${answer.status} (${media.join(", ")})`];
      if (type !== "application/json") return [];
      const ref = `${DOCUMENT_ID}#/paths/${pointerToken(path)}/${method}/responses/${answer.status}/content/${pointerToken(type)}/schema`;
      const validate = ajv.getSchema(ref);
      if (!validate) return [`no schema at ${ref}`];
      if (validate(answer.body)) return [];
      return (validate.errors ?? []).map(
        (error) =>
          `body${error.instancePath} ${error.message ?? "is invalid"}${
            error.keyword === "unevaluatedProperties" ? ` (${JSON.stringify(error.params)})` : ""
          }`,
      );
    },
  };
}
