import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testAgentYaml } from "../support/agents.js";
import { userTexts } from "../support/anthropic-body.js";
import { eventually } from "../support/eventually.js";
import { type GatewayClient, gatewayClient, type ThreadEntryView } from "../support/gateway-client.js";
import { type Model, textReply } from "../support/model-script.js";
import { startModelStack } from "../support/model-stack.js";
import type { Stack } from "../support/stack.js";

// Issue 16, webhooks end to end: real gateway and agent-runner processes over real NATS and Redis,
// the fake Anthropic server as the model. Each scenario has its own agent.

const DEPLOY_SECRET = "e2e-deploy-secret-0123456789";
const GITHUB_SECRET = "e2e-github-secret-0123456789";

const hooks = (suffix: string) => ({
  webhooks: {
    [`deploy-${suffix}`]: {
      auth: "hmac",
      secret_env: "E2E_DEPLOY_SECRET",
      template: "deploy of {{ commit }} finished: {{ status }}",
    },
    [`gh-${suffix}`]: { auth: "github", secret_env: "E2E_GITHUB_SECRET" },
  },
});

const AGENTS = {
  hooked: testAgentYaml("hooked", { extra: hooks("a") }),
  guarded: testAgentYaml("guarded", { extra: hooks("b") }),
};

const sha256 = (secret: string, ...parts: string[]) => {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return `sha256=${mac.digest("hex")}`;
};

/** A generic signed delivery (`auth: hmac`), signed `ageS` seconds ago. */
function deployDelivery(payload: unknown, delivery: string, ageS = 0) {
  const body = JSON.stringify(payload);
  const timestamp = String(Math.floor(Date.now() / 1000) - ageS);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-webhook-delivery": delivery,
      "x-webhook-timestamp": timestamp,
      "x-webhook-signature": sha256(DEPLOY_SECRET, `${timestamp}.`, body),
    },
  };
}

describe("webhooks end to end", () => {
  let model: Model;
  let stack: Stack;
  let gateway: GatewayClient;

  beforeAll(async () => {
    ({ model, stack } = await startModelStack({
      services: ["gateway", "agent-runner"],
      agents: AGENTS,
      env: { E2E_DEPLOY_SECRET: DEPLOY_SECRET, E2E_GITHUB_SECRET: GITHUB_SECRET },
    }));
    gateway = gatewayClient(stack.gatewayUrl);
  });

  afterAll(async () => {
    await stack?.stop();
    await model?.close();
  });

  const post = (name: string, delivery: { body: string; headers: Record<string, string> }) =>
    fetch(`${stack.gatewayUrl}/v1/hooks/${name}`, { method: "POST", body: delivery.body, headers: delivery.headers });

  const idle = (agent: string) =>
    eventually(async () => (await gateway.status(agent)).state === "idle", `${agent} to be idle again`);

  const inputs = async (agent: string) =>
    (await gateway.thread(agent))
      .filter((entry: ThreadEntryView) => entry.kind === "input")
      .sort((a, b) => Number(a.ts) - Number(b.ts));

  it("a webhook is answered 202 while its agent is still busy, and its payload lands in the thread its DMs use", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.script(
      "hooked",
      async () => {
        await held;
        return textReply("Noted, Bob.");
      },
      textReply("The deploy went through."),
    );
    const dm = await gateway.send("hooked", "Please keep an eye on the deploys.", "bob");
    expect(dm.status).toBe(202);
    await model.waitForRequests("hooked", 1);

    // The agent is inside its first LLM call (held): the hook's 202 cannot have waited for it.
    const response = await post("deploy-a", deployDelivery({ commit: "abc1234", status: "success" }, "deploy-1"));
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    expect(model.requests("hooked")).toHaveLength(1);
    expect(userTexts(model.requests("hooked")[0]?.body ?? { model: "", messages: [] }).join("\n")).not.toContain(
      "webhook",
    );

    release();
    const [, second] = await model.waitForRequests("hooked", 2);
    expect(userTexts(second?.body ?? { model: "", messages: [] })).toEqual([
      "[http:bob] Please keep an eye on the deploys.",
      "[webhook:deploy-a] deploy of abc1234 finished: success",
    ]);
    await idle("hooked");

    // One thread: the DM and the delivery, both in the personal context, in arrival order.
    const entries = await inputs("hooked");
    expect(entries.map((entry) => [entry.source, entry.context, entry.text])).toEqual([
      ["http:bob", "personal", "Please keep an eye on the deploys."],
      ["webhook:deploy-a", "personal", "deploy of abc1234 finished: success"],
    ]);
    expect(entries[1]?.envelopeId).toBe(id);
  });

  it("bad signatures, replays and repeated delivery ids are refused or deduplicated: nothing of them reaches the agent", async () => {
    const first = deployDelivery({ commit: "def5678", status: "failed" }, "deploy-2");
    const accepted = await post("deploy-b", first);
    const answeredAt = Date.now();
    expect(accepted.status).toBe(202);
    const acceptedId = ((await accepted.json()) as { id: string }).id;
    // Idle agent: the 202 came before the agent's LLM call for the delivery.
    const [handled] = await model.waitForRequests("guarded", 1);
    expect(handled?.receivedAt).toBeGreaterThanOrEqual(answeredAt);
    await idle("guarded");

    // The same delivery again (a provider's retry), then again re-signed now: one delivery id, one input.
    expect((await post("deploy-b", first)).status).toBe(202);
    const resigned = await post("deploy-b", deployDelivery({ commit: "def5678", status: "failed" }, "deploy-2"));
    expect(resigned.status).toBe(202);
    expect(((await resigned.json()) as { id: string }).id).toBe(acceptedId);

    const forged = deployDelivery({ commit: "evil", status: "success" }, "deploy-3");
    forged.headers["x-webhook-signature"] = sha256(
      "not-the-secret-0123456789",
      `${forged.headers["x-webhook-timestamp"]}.`,
      forged.body,
    );
    expect((await post("deploy-b", forged)).status).toBe(401);
    expect(
      (await post("deploy-b", deployDelivery({ commit: "old", status: "success" }, "deploy-4", 3600))).status,
    ).toBe(401);
    const push = JSON.stringify({ ref: "refs/heads/main" });
    const badGithub = await post("gh-b", {
      body: push,
      headers: {
        "content-type": "application/json",
        "x-github-delivery": "gh-1",
        "x-hub-signature-256": sha256("not-the-secret-0123456789", push),
      },
    });
    expect(badGithub.status).toBe(401);

    // A DM after all of them: once it is in the thread, anything published before it would be too.
    expect((await gateway.send("guarded", "anything new?", "bob")).status).toBe(202);
    await model.waitForRequests("guarded", 2);
    await idle("guarded");
    const entries = await inputs("guarded");
    expect(entries.map((entry) => [entry.source, entry.text])).toEqual([
      ["webhook:deploy-b", "deploy of def5678 finished: failed"],
      ["http:bob", "anything new?"],
    ]);
    expect(model.requests("guarded")).toHaveLength(2);
    const texts = userTexts(model.requests("guarded")[1]?.body ?? { model: "", messages: [] }).join("\n");
    expect(texts).not.toMatch(/evil|old|refs\/heads/);
  });
});
