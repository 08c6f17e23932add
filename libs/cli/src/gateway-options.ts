import { type Client, createClient } from "@moniro/client";
import type { Command } from "commander";

export interface GatewayFlags {
  gateway?: string;
}

/** Adds `--gateway <url>` (the gateway a command talks to). */
export function withGateway(command: Command): Command {
  return command.option("--gateway <url>", "gateway URL (default: $MONIRO_GATEWAY_URL or http://127.0.0.1:8080)");
}

/**
 * The API key the CLI sends: MONIRO_API_KEY, else the first of
 * MONIRO_API_KEYS (the gateway's own list, as `moniro up` passes it on).
 */
export function apiKeyOf(env: Record<string, string | undefined>): string | undefined {
  const key = env.MONIRO_API_KEY?.trim() || env.MONIRO_API_KEYS?.split(",")[0]?.trim();
  return key || undefined;
}

/** The client of the gateway named by `--gateway`, else MONIRO_GATEWAY_URL, else the local default. */
export function clientFor(flags: GatewayFlags, env: Record<string, string | undefined> = process.env): Client {
  const apiKey = apiKeyOf(env);
  return createClient({
    env,
    ...(flags.gateway ? { baseUrl: flags.gateway, baseUrlName: "--gateway" } : {}),
    ...(apiKey ? { apiKey } : {}),
  });
}
