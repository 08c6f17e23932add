/** The userinfo of a URL (`scheme://user:pass@`, `scheme://token@`, or the same without a scheme). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)?([^/]*)@/i;

/**
 * A URL or comma-separated URL list (NATS servers, Redis Cluster seeds) for
 * logs and error messages: `user:***@` for a password, `***@` for a token,
 * nothing else changed.
 */
export function redactUrlCredentials(url: string): string {
  return url
    .split(",")
    .map((server) => server.trim())
    .filter((server) => server.length > 0)
    .map((server) =>
      server.replace(USERINFO, (_all, scheme: string | undefined, info: string) => {
        const colon = info.indexOf(":");
        return colon >= 0 ? `${scheme ?? ""}${info.slice(0, colon)}:***@` : `${scheme ?? ""}***@`;
      }),
    )
    .join(",");
}
