import type { Command } from "commander";

function stackFlags(command: Command): Command {
  return command
    .option("--nats-url <url>", "NATS server (default: $MONIRO_NATS_URL or nats://127.0.0.1:4222)")
    .option("--redis-url <url>", "Redis server (default: $MONIRO_REDIS_URL or redis://127.0.0.1:6379)")
    .option("--gateway-port <port>", "gateway HTTP port (default: $MONIRO_GATEWAY_PORT or 8080; 0: any free port)")
    .option(
      "--base-port <port>",
      "first health/metrics port of the other services (default: $MONIRO_BASE_PORT or 9101; 0: any free ports)",
    )
    .option("--namespace <name>", "first token of every NATS subject (default: $MONIRO_NAMESPACE or moniro)")
    .option("--redis-prefix <prefix>", "prefix of every Redis key (default: $MONIRO_REDIS_PREFIX or moniro:)")
    .option("--data-dir <dir>", "local state: server data, logs, workspaces (default: $MONIRO_DATA_DIR or .moniro)");
}

/** `moniro up` and `moniro demo`: the local stack. */
export function register(program: Command): void {
  stackFlags(
    program
      .command("up")
      .description("start NATS and Redis if needed, then the five services, in the foreground (Ctrl-C stops all)"),
  ).action(async (flags) => {
    // Every child is stopped by now; do not linger on keep-alive sockets.
    // Loaded here: the stack's modules (NATS, process supervision) are not needed by the other commands.
    const { upCommand } = await import("./up.js");
    process.exit(await upCommand(flags));
  });

  stackFlags(
    program
      .command("demo")
      .description("bring the stack up, ask agent alice what is in her workspace, print what she does, stop")
      .option("--timeout <seconds>", "give up when alice has not answered after this long", "60"),
  ).action(async (flags) => {
    const { demoCommand } = await import("./demo.js");
    process.exit(await demoCommand(flags));
  });
}
