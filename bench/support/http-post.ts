import http from "node:http";

/**
 * A JSON POST over node:http with a keep-alive agent: the status and body text. The services bench posts its
 * DMs with it, not the global fetch, so a wake timed from the call is the gateway's and the runner's: fetch
 * spent ~0.5 ms of this process's time before the request reached the socket (its Request, headers and
 * web-stream machinery), which counted in the wake though no Moniro service did anything yet.
 */
export function httpPoster(agentOptions: http.AgentOptions = {}): {
  post(url: string, body: unknown): Promise<{ status: number; text: string }>;
  close(): void;
} {
  const agent = new http.Agent({ keepAlive: true, ...agentOptions });
  return {
    post(url, body) {
      const payload = Buffer.from(JSON.stringify(body));
      return new Promise((resolve, reject) => {
        const request = http.request(
          url,
          {
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": payload.byteLength },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () =>
              resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
            );
            response.on("error", reject);
          },
        );
        request.on("error", reject);
        request.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
