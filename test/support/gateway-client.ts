/** One thread entry as GET /v1/agents/:agent/thread shows it. */
export interface ThreadEntryView {
  kind: string;
  envelopeId?: string;
  callId?: string;
  tool?: string;
  content?: string;
  text?: string;
  isError?: boolean;
  interrupted?: boolean;
  toolUses?: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  status?: string;
  [field: string]: unknown;
}
/** GET /v1/agents/:agent. */
export interface AgentStatusView {
  state: string;
  leaseHolder?: string | null;
  [field: string]: unknown;
}
interface ThreadPage {
  entries: ThreadEntryView[];
  next?: string | null;
}

/** What the gateway answered: status, parsed JSON body (or the raw text when it is not JSON). */
export interface GatewayReply<T = unknown> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

async function reply<T>(response: Response): Promise<GatewayReply<T>> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // keep the raw text: a test asserting on the body says what it got
  }
  return { status: response.status, body: body as T, text, headers: response.headers };
}

/**
 * A small client for the gateway's HTTP API (issue 2/3): what a user's
 * program would call. Every method returns the status and the body, so tests
 * can assert on both.
 */
export function gatewayClient(baseUrl: string, headers: Record<string, string> = {}) {
  async function request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<GatewayReply<T>> {
    const init: RequestInit = { method, headers: { ...headers, ...extraHeaders } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers = { "content-type": "application/json", ...headers, ...extraHeaders };
    }
    return reply<T>(await fetch(`${baseUrl}${path}`, init));
  }

  const agentPath = (agent: string) => `/v1/agents/${encodeURIComponent(agent)}`;

  return {
    baseUrl,
    request,
    /** POST /v1/agents/:agent/messages `{ text, from }` → 202 `{ id }`. */
    send: (agent: string, text: string, from = "bob") =>
      request<{ id: string }>("POST", `${agentPath(agent)}/messages`, { text, from }),
    /** GET /v1/agents/:agent: state, lease holder, inbox depth per lane. */
    agent: <T = Record<string, unknown>>(agent: string) => request<T>("GET", agentPath(agent)),
    /** GET /v1/agents/:agent/thread (one page). */
    threadPage: <T = Record<string, unknown>>(agent: string, query = "") =>
      request<T>("GET", `${agentPath(agent)}/thread${query}`),
    /** State and lease holder from GET /v1/agents/:agent. */
    async status(agent: string): Promise<AgentStatusView> {
      const reply = await request<AgentStatusView>("GET", agentPath(agent));
      if (reply.status !== 200) throw new Error(`GET agent ${agent} answered ${reply.status}: ${reply.text}`);
      return reply.body;
    },
    /** Every entry of the agent's thread, following the pages. */
    async thread(agent: string): Promise<ThreadEntryView[]> {
      const entries: ThreadEntryView[] = [];
      let query = "";
      for (let page = 0; page < 1000; page++) {
        const reply = await request<ThreadPage>("GET", `${agentPath(agent)}/thread${query}`);
        if (reply.status !== 200) throw new Error(`GET thread of ${agent} answered ${reply.status}: ${reply.text}`);
        entries.push(...reply.body.entries);
        if (!reply.body.next) return entries;
        query = `?after=${encodeURIComponent(reply.body.next)}`;
      }
      throw new Error(`the thread of ${agent} has more than 1000 pages`);
    },
    /** POST /v1/agents/:agent/cancel | pause | resume. */
    control: (agent: string, op: "cancel" | "pause" | "resume") => request("POST", `${agentPath(agent)}/${op}`, {}),
    eventsUrl: (agent: string) => `${baseUrl}${agentPath(agent)}/events`,
  };
}
export type GatewayClient = ReturnType<typeof gatewayClient>;
