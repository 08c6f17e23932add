import { closestKey } from "../agents/closest-key.js";

/** A `${{ name }}` hole: a name of letters, digits and '_' (not starting with a digit). */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const HOLE = /\$\{\{([^}]*)\}\}/g;

export type KickoffPart = { text: string } | { variable: string };

/** What is wrong with a kickoff template, for the caller to name with its file and field. */
export class KickoffSyntaxError extends Error {
  override readonly name = "KickoffSyntaxError";
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/**
 * Splits a kickoff into text and `${{ name }}` holes. A `${{` that is not
 * closed, or whose inside is not one name, is an error naming its line.
 */
export function parseKickoff(template: string): KickoffPart[] {
  const parts: KickoffPart[] = [];
  let last = 0;
  for (const match of template.matchAll(HOLE)) {
    const index = match.index ?? 0;
    const name = (match[1] ?? "").trim();
    if (!VARIABLE_NAME.test(name)) {
      throw new KickoffSyntaxError(
        `'${match[0]}' on line ${lineOf(template, index)} must hold one name (letters, digits, '_'), e.g. '\${{ changes }}'`,
      );
    }
    if (index > last) parts.push({ text: template.slice(last, index) });
    parts.push({ variable: name });
    last = index + match[0].length;
  }
  const rest = template.slice(last);
  const open = rest.indexOf("${{");
  if (open >= 0) {
    throw new KickoffSyntaxError(`'\${{' on line ${lineOf(template, last + open)} is not closed: write '\${{ name }}'`);
  }
  if (rest !== "") parts.push({ text: rest });
  return parts;
}

/** The names a kickoff uses, once each, in order. */
export function kickoffVariables(template: string): string[] {
  const names: string[] = [];
  for (const part of parseKickoff(template)) {
    if ("variable" in part && !names.includes(part.variable)) names.push(part.variable);
  }
  return names;
}

/** A kickoff names a value that was not given. */
export class KickoffVariableError extends Error {
  override readonly name = "KickoffVariableError";
  constructor(
    readonly variable: string,
    readonly known: readonly string[],
  ) {
    const suggestion = closestKey(variable, known);
    super(
      `the kickoff uses \${{ ${variable} }}, which has no value${suggestion ? `; did you mean '${suggestion}'?` : ""} (known: ${known.length > 0 ? known.join(", ") : "none"}): give it as a variable when starting the instance, or name a setup step 'as: ${variable}'`,
    );
  }
}

/** Fills every hole from `values`; a name without a value is a KickoffVariableError. */
export function renderKickoff(template: string, values: Readonly<Record<string, string>>): string {
  const known = Object.keys(values).sort();
  return parseKickoff(template)
    .map((part) => {
      if ("text" in part) return part.text;
      const value = values[part.variable];
      if (value === undefined || !Object.hasOwn(values, part.variable)) {
        throw new KickoffVariableError(part.variable, known);
      }
      return value;
    })
    .join("");
}
