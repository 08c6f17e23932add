import { isIPv4, isIPv6 } from "node:net";

/** `localhost`, 127.0.0.0/8 and ::1 (bracketed or not, IPv4-mapped too): addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (name === "localhost") return true;
  if (isIPv4(name)) return name.startsWith("127.");
  if (isIPv6(name)) return name === "::1" || name === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(name);
  return false;
}

/** A host as it appears in a URL: IPv6 addresses in brackets. */
export function urlHost(host: string): string {
  return isIPv6(host) ? `[${host}]` : host;
}
