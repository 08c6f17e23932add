/**
 * The webhook template language: literal text with `{{ path }}` holes, where
 * a path walks the JSON payload (`pull_request.title`, `commits[0].id`,
 * `labels.0.name`) or names a delivery fact (`$hook`, `$event`, `$delivery`).
 * There are no expressions, calls or loops: a template can only copy values
 * out of the payload, so a hook definition can never run code.
 */

/** One step of a path: an object key or an array index. */
export type TemplatePathStep = string | number;

export type TemplatePart = { literal: string } | { path: readonly TemplatePathStep[]; source: string };

/** A parsed template, ready to render any number of payloads. */
export interface CompiledTemplate {
  readonly parts: readonly TemplatePart[];
}

/** Values a template can name besides the payload. */
export const TEMPLATE_VARIABLES = ["$hook", "$event", "$delivery"] as const;

export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

const KEY = /^[A-Za-z0-9_$-]+/;
const INDEX = /^\[(\d{1,9})\]/;

function parsePath(source: string): TemplatePathStep[] {
  const steps: TemplatePathStep[] = [];
  let rest = source;
  const first = KEY.exec(rest);
  if (!first) {
    throw new TemplateError(
      `'{{ ${source} }}' is not a path: write keys separated by dots, like {{ pull_request.title }} or {{ commits[0].id }}`,
    );
  }
  if (first[0].startsWith("$") && !(TEMPLATE_VARIABLES as readonly string[]).includes(first[0])) {
    throw new TemplateError(`'${first[0]}' is not a template variable: use one of ${TEMPLATE_VARIABLES.join(", ")}`);
  }
  steps.push(first[0]);
  rest = rest.slice(first[0].length);
  while (rest.length > 0) {
    const index = INDEX.exec(rest);
    if (index?.[1] !== undefined) {
      steps.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    const key = rest.startsWith(".") ? KEY.exec(rest.slice(1)) : null;
    if (!key) {
      throw new TemplateError(
        `'{{ ${source} }}' is not a path: write keys separated by dots, like {{ pull_request.title }} or {{ commits[0].id }}`,
      );
    }
    steps.push(/^\d+$/.test(key[0]) ? Number(key[0]) : key[0]);
    rest = rest.slice(key[0].length + 1);
  }
  return steps;
}

/** Parses a template; a TemplateError says what is wrong and what to write. */
export function compileTemplate(template: string): CompiledTemplate {
  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf("{{");
    if (open < 0) {
      parts.push({ literal: rest });
      break;
    }
    if (open > 0) parts.push({ literal: rest.slice(0, open) });
    const close = rest.indexOf("}}", open + 2);
    if (close < 0) throw new TemplateError("a '{{' is never closed: end each hole with '}}', like {{ action }}");
    const source = rest.slice(open + 2, close).trim();
    if (source.length === 0) throw new TemplateError("'{{ }}' is empty: put a path inside, like {{ action }}");
    parts.push({ path: parsePath(source), source });
    rest = rest.slice(close + 2);
  }
  return { parts };
}
