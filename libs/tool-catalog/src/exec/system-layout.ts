import { lstatSync, readlinkSync } from "node:fs";

/**
 * What of the host a sandboxed command sees, read-only: /usr, the top-level
 * directories that hold programs and libraries (symlinks into /usr on merged-
 * /usr systems, real directories elsewhere), and a short list of harmless
 * /etc files. Everything else (other workspaces, the executor's files, /root,
 * /home, /var, /opt, /etc/shadow and every other /etc secret) does not exist
 * inside.
 */
export interface SystemLayout {
  /** Top-level entries: a symlink recreated as such, or a directory bound read-only. */
  topLevel: Array<{ path: string; symlinkTo?: string }>;
  /** /etc entries bound read-only when present on the host (`--ro-bind-try`). */
  etc: readonly string[];
}

const TOP_LEVEL = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * Name lookup (passwd, group: no password hashes live there), the dynamic
 * linker, TLS roots, time zone, resolver and protocol tables. Never shadow,
 * gshadow, sudoers, ssh keys, /etc/ssl/private or service configs.
 */
export const ETC_WHITELIST = [
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/alternatives",
  "/etc/ssl/certs",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
  "/etc/localtime",
  "/etc/timezone",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/resolv.conf",
  "/etc/gai.conf",
  "/etc/protocols",
  "/etc/services",
  "/etc/mime.types",
  "/etc/os-release",
  "/etc/debian_version",
  "/etc/inputrc",
  "/etc/terminfo",
  "/etc/magic",
] as const;

/** The layout of this host (read once per executor start; the pure arguments are built from it). */
export function systemLayout(): SystemLayout {
  const topLevel: SystemLayout["topLevel"] = [];
  for (const path of TOP_LEVEL) {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) topLevel.push({ path, symlinkTo: readlinkSync(path) });
      else if (info.isDirectory()) topLevel.push({ path });
    } catch {
      // absent on this distribution
    }
  }
  return { topLevel, etc: ETC_WHITELIST };
}
