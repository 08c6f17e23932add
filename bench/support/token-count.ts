import type { FakeRequestBody } from "@moniro/llm/test";

/** The prompt parts of a Messages request as text: system, tool schemas, messages. */
export function promptParts(body: FakeRequestBody): { system: string; tools: string; messages: string } {
  const system =
    typeof body.system === "string" ? body.system : (body.system ?? []).map((block) => block.text).join("\n");
  const tools = JSON.stringify(
    (body.tools ?? []).map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.input_schema,
    })),
  );
  return { system, tools, messages: JSON.stringify(body.messages) };
}

/** The common rule of thumb for English and JSON: about four characters per token. */
export function charsOver4(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * A real tokenizer when one is installed: `@anthropic-ai/tokenizer` (the
 * public Claude tokenizer, made for pre-Claude-3 models, so still an
 * approximation for current ones). Undefined when it is not installed.
 */
export async function claudeTokenizer(): Promise<((text: string) => number) | undefined> {
  const name = "@anthropic-ai/tokenizer";
  try {
    const module = (await import(name)) as { countTokens?: (text: string) => number };
    return typeof module.countTokens === "function" ? module.countTokens : undefined;
  } catch {
    return undefined;
  }
}
