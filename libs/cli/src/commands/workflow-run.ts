import { workflows } from "@moniro/api";
import { openEventStream } from "@moniro/client";
import { type ChannelEntry, parseJson } from "@moniro/envelopes";
import type { Command } from "commander";
import { clientFor, type GatewayFlags, withGateway } from "../gateway-options.js";
import { collectVariable, formatMembers } from "../workflow-format.js";

interface RunFlags extends GatewayFlags {
  tag?: string;
  var?: Record<string, string>;
}

/** One channel post as `moniro run` prints it. */
export function formatPost(entry: Pick<ChannelEntry, "from" | "text" | "at">): string {
  return `[${new Date(entry.at).toISOString().slice(11, 19)}] ${entry.from}: ${entry.text}`;
}

/**
 * `moniro run <workflow> [--tag t]`: starts the instance, prints its channel
 * as it grows, and stops the instance on Ctrl-C (or SIGTERM).
 */
export function register(program: Command): void {
  withGateway(
    program
      .command("run")
      .description("run a workflow in the foreground: start it, print its channel, Ctrl-C stops the instance")
      .argument("<workflow>", "workflow name (.workflows/<name>.yaml)")
      .option("--tag <tag>", "instance tag (default: main)")
      .option("--var <name=value>", "a variable of the workflow (repeatable)", collectVariable),
  ).action(async (workflow: string, flags: RunFlags) => {
    const client = clientFor(flags);
    const started = await client.call(workflows.startWorkflowInstance, {
      params: { workflow },
      body: { ...(flags.tag ? { tag: flags.tag } : {}), ...(flags.var ? { variables: flags.var } : {}) },
    });
    const { instance } = started;
    process.stdout.write(
      `${instance.instance}: ${started.started ? "started" : "already running"} (Ctrl-C stops it)\n${formatMembers(instance)}\n`,
    );
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    const stream = openEventStream({
      baseUrl: client.baseUrl,
      url: client.url(workflows.streamWorkflowChannel, { params: { workflow, tag: instance.tag } }),
      headers: client.headers(),
      signal: abort.signal,
      onReconnect: ({ reason, delayMs }) =>
        process.stderr.write(`moniro run: ${reason}; reconnecting in ${(delayMs / 1000).toFixed(1)} s\n`),
    });
    for await (const event of stream) {
      if (event.event !== "post") continue;
      const parsed = parseJson(event.data);
      if (parsed.ok) process.stdout.write(`${formatPost(parsed.value as ChannelEntry)}\n`);
    }
    const stopped = await client.call(workflows.stopWorkflowInstance, { params: { workflow, tag: instance.tag } });
    process.stdout.write(
      `${stopped.instance}: ${stopped.stopped ? `stopped${stopped.discarded ? " (workspace discarded)" : " (workspace kept)"}` : "was not running"}\n`,
    );
  });
}
