/** The definition of an agent of the `services` and `rss-floor` benchmarks: the Anthropic backend, a one-line system prompt. */
export function benchAgentYaml(name: string): string {
  return `name: ${name}\nmodel: claude-bench\nbackend: anthropic\nprompt:\n  system: You are ${name}, a helpful assistant.\n`;
}
