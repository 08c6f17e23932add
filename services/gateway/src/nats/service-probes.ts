import { randomUUID } from "node:crypto";
import { NoRespondersError, PublishRefusedError, RequestTimeoutError } from "@moniro/bus";
import { type Subjects, stamp } from "@moniro/envelopes";
import type { RedisClient } from "@moniro/store";
import type { ServiceHealth, ServiceProbes } from "../ports.js";
import type { NatsLink } from "./nats-link.js";

/**
 * An agent name no definition can take (`--` marks sub-agents): probes that
 * must name an agent name this one, so no real agent is touched.
 */
export const PROBE_AGENT = "status--probe";

const up = (detail: string): ServiceHealth => ({ status: "up", detail });
const down = (detail: string): ServiceHealth => ({ status: "down", detail });

/**
 * How the gateway sees the other services, over NATS core request/reply:
 * - a service that answers requests (scheduler: a `list` for PROBE_AGENT;
 *   signal-bridge: a pairing `list`) is up when it replies;
 * - a service that only listens (agent-runners on `<ns>.runner.input.*`,
 *   tool-executors on `<ns>.tool.cancel.*`) is up when the request finds a
 *   subscriber: NATS answers "no responders" at once when none does, while a
 *   subscriber that does not reply lets the request time out after
 *   `listenMs`. The probe messages are harmless: a notice about PROBE_AGENT,
 *   a cancel of a call id nobody runs;
 * - a probe whose publish the gateway's NATS user may not send reads `down`
 *   with the refusal, never as a subscriber that did not reply.
 */
export function natsServiceProbes(
  link: NatsLink,
  subjects: Subjects,
  redis: RedisClient,
  options: { timeoutMs: number; listenMs: number },
): ServiceProbes {
  async function ask(subject: string, payload: unknown, listenOnly: boolean): Promise<ServiceHealth> {
    const timeoutMs = listenOnly ? options.listenMs : options.timeoutMs;
    try {
      await link.get().bus.request(subject, payload, { timeoutMs });
      return up(`answers ${subject}`);
    } catch (error) {
      if (error instanceof NoRespondersError) return down(`nothing subscribes to ${subject}`);
      // Refused, the probe never reached a subscriber: it says nothing about the service.
      if (error instanceof PublishRefusedError)
        return down(`unknown: NATS refuses the gateway's publish to ${subject} (grant its user publish there)`);
      if (error instanceof RequestTimeoutError) {
        return listenOnly
          ? up(`subscribed to ${subject}`)
          : down(`${subject} has a subscriber, but no reply came within ${timeoutMs} ms`);
      }
      return down(`cannot reach NATS: ${(error as Error).message}`);
    }
  }
  return {
    async nats() {
      try {
        await link.check();
        return up("connected");
      } catch (error) {
        return down((error as Error).message);
      }
    },
    async redis() {
      try {
        if (redis.status !== "ready") return down(`not connected (${redis.status}); retrying`);
        await redis.ping();
        return up("answers PING");
      } catch (error) {
        return down((error as Error).message);
      }
    },
    scheduler: () => ask(subjects.sched("list"), { ...stamp(), op: "list", agent: PROBE_AGENT }, false),
    signalBridge: () => ask(subjects.signalPairing, { op: "list" }, false),
    runners: () => ask(subjects.runnerInput(PROBE_AGENT), new Uint8Array(0), true),
    toolExecutors: () => {
      const callId = `status-probe-${randomUUID()}`;
      return ask(subjects.toolCancel(callId), { ...stamp(), callId, agent: PROBE_AGENT, reason: "status probe" }, true);
    },
  };
}
