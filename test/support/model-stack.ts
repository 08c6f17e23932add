import { type Model, startModel } from "./model-script.js";
import { type ServiceName, type Stack, type StackOptions, startStack } from "./stack.js";

/**
 * The fake Anthropic server and a stack whose `anthropic`-backend agents call it
 * (`ANTHROPIC_BASE_URL` = the fake). Stop both with `stack.stop()` and `model.close()`.
 */
export async function startModelStack(options: {
  services: readonly ServiceName[];
  agents: Record<string, string>;
  env?: Record<string, string>;
  redis?: StackOptions["redis"];
  workflows?: StackOptions["workflows"];
}): Promise<{ model: Model; stack: Stack }> {
  const model = await startModel();
  try {
    const stack = await startStack({
      services: options.services,
      agents: options.agents,
      ...(options.workflows ? { workflows: options.workflows } : {}),
      env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "e2e-test-key", ...options.env },
      ...(options.redis ? { redis: options.redis } : {}),
    });
    return { model, stack };
  } catch (error) {
    await model.close();
    throw error;
  }
}
