/**
 * `@name` mentions in a channel post. A mention starts at the beginning of the
 * text or after a character that cannot be part of a word or an address (so
 * `bob@example.com` and `alice@review` mention nobody), and a name followed by
 * `/` is a path or a package scope (`@types/node`), not a mention, and the name runs as
 * far as name characters go. People write `@Bob`: names are matched
 * lower-cased. Each name is listed once, in order of first appearance.
 */
const MENTION = /(?<![A-Za-z0-9_.@+-])@([A-Za-z0-9][A-Za-z0-9_-]{0,62})(?![A-Za-z0-9_@/-])/g;

/** At most this many distinct names are taken from one post; more are not mentions. */
export const MAX_MENTIONS = 64;

export function parseMentions(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const name = (match[1] ?? "").toLowerCase();
    if (!names.includes(name)) names.push(name);
    if (names.length === MAX_MENTIONS) break;
  }
  return names;
}
