import { describe, expect, it } from "vitest";
import { createProvider, providerProblem } from "./create-provider.js";
import { LlmConfigError } from "./llm-config-error.js";
import { startFakeAnthropic, textReply } from "./test/index.js";

function configError(run: () => unknown): LlmConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LlmConfigError);
    return error as LlmConfigError;
  }
  throw new Error("expected an LlmConfigError");
}

describe("createProvider", () => {
  it("gives the mock provider for backend mock, with no key needed", () => {
    expect(createProvider({ backend: "mock", model: "any", name: "alice" }, {}).name).toBe("mock");
  });

  it("refuses backend anthropic without ANTHROPIC_API_KEY, naming the variable and backend: mock", () => {
    for (const env of [{}, { ANTHROPIC_API_KEY: "" }, { ANTHROPIC_API_KEY: "  " }]) {
      const error = configError(() => createProvider({ backend: "anthropic", model: "claude", name: "alice" }, env));
      expect(error.message).toContain("agent 'alice'");
      expect(error.message).toContain("ANTHROPIC_API_KEY");
      expect(error.message).toContain("backend: mock");
      expect(error.code).toBe("missing_api_key");
      expect(error.errorClass).toBe("permanent");
    }
  });

  it("refuses an unknown backend, listing the known ones", () => {
    const error = configError(() => createProvider({ backend: "openai", model: "gpt" }, {}));
    expect(error.message).toContain("'openai'");
    expect(error.message).toContain("'anthropic', 'mock'");
  });

  it("refuses a malformed ANTHROPIC_BASE_URL or timeout, naming the variable", () => {
    const url = configError(() =>
      createProvider(
        { backend: "anthropic", model: "c" },
        { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "localhost:80" },
      ),
    );
    expect(url.message).toContain("ANTHROPIC_BASE_URL");
    const timeout = configError(() =>
      createProvider({ backend: "anthropic", model: "c" }, { ANTHROPIC_API_KEY: "k", MONIRO_LLM_TIMEOUT_MS: "soon" }),
    );
    expect(timeout.message).toContain("MONIRO_LLM_TIMEOUT_MS");
  });

  it("talks to ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY", async () => {
    const fake = await startFakeAnthropic({ apiKey: "from-env", replies: [textReply("hello from the fake")] });
    try {
      const llm = createProvider(
        { backend: "anthropic", model: "claude-x" },
        { ANTHROPIC_API_KEY: "from-env", ANTHROPIC_BASE_URL: `${fake.url}/` },
      );
      expect(llm.name).toBe("anthropic");
      const response = await llm.stream({
        model: "claude-x",
        system: "",
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        tools: [],
        maxTokens: 50,
      });
      expect(response.text).toBe("hello from the fake");
      expect(fake.requests[0]?.body.model).toBe("claude-x");
    } finally {
      await fake.close();
    }
  });
});

describe("providerProblem", () => {
  it("says what createProvider would refuse, without building a provider; nothing when it would build one", () => {
    const keyless = { backend: "anthropic", model: "claude-x", name: "claude" };
    expect(providerProblem(keyless, {})).toBe(configError(() => createProvider(keyless, {})).message);
    expect(providerProblem(keyless, {})).toContain("ANTHROPIC_API_KEY is not set");
    expect(providerProblem(keyless, { ANTHROPIC_API_KEY: "k" })).toBeUndefined();
    expect(providerProblem({ backend: "mock", model: "any" }, {})).toBeUndefined();
    expect(providerProblem({ backend: "gpt", model: "any", name: "x" }, {})).toContain("backend 'gpt'");
    expect(providerProblem({ backend: "mock", model: "any" }, { MONIRO_LLM_TIMEOUT_MS: "soon" })).toContain(
      "MONIRO_LLM_TIMEOUT_MS must be a whole number",
    );
  });
});
