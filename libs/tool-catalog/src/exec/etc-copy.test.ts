import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../test/test-context.js";
import { defaultEtcCopyParent, EtcCopy } from "./etc-copy.js";

/** A fake host: `<root>/etc` with a file, a symlinked file, a directory holding a symlink, and a secret not whitelisted. */
function fakeHost() {
  const root = tempDir("moniro-etc-host-");
  const etc = join(root, "etc");
  mkdirSync(join(etc, "ssl", "certs"), { recursive: true });
  mkdirSync(join(root, "run"));
  writeFileSync(join(etc, "passwd"), "root:x:0:0:root:/root:/bin/bash\n");
  chmodSync(join(etc, "passwd"), 0o644);
  writeFileSync(join(root, "run", "resolv.conf"), "nameserver 10.0.0.1\n");
  symlinkSync("../run/resolv.conf", join(etc, "resolv.conf"));
  writeFileSync(join(etc, "ssl", "certs", "bundle.crt"), "CERT A\n");
  symlinkSync("bundle.crt", join(etc, "ssl", "certs", "abcd1234.0"));
  writeFileSync(join(etc, "shadow"), "root:$6$secret\n");
  const entries = ["passwd", "resolv.conf", "ssl/certs", "timezone"].map((entry) => join(etc, entry));
  const copies = tempDir("moniro-etc-copies-");
  return { root, etc, entries, copies };
}

describe("EtcCopy: the sandbox's /etc as one directory", () => {
  async function copyOf(host: ReturnType<typeof fakeHost>, clock?: { t: number }) {
    return EtcCopy.create(host.entries, host.copies, {
      etcRoot: host.etc,
      ...(clock ? { now: () => clock.t } : {}),
    });
  }

  it("holds the whitelisted entries as a bind shows them: files with their modes, a symlinked entry followed, inner symlinks kept, absent and other entries left out", async () => {
    const host = fakeHost();
    const copy = await copyOf(host);
    const { dir, release } = copy.acquire();
    expect(statSync(dir).mode & 0o777).toBe(0o755);
    expect(readdirSync(dir).sort()).toEqual(["passwd", "resolv.conf", "ssl"]);
    expect(readFileSync(join(dir, "passwd"), "utf8")).toBe("root:x:0:0:root:/root:/bin/bash\n");
    expect(statSync(join(dir, "passwd")).mode & 0o777).toBe(0o644);
    // The entry was a symlink out of /etc: its content is there, not a link the sandbox could not follow.
    expect(lstatSync(join(dir, "resolv.conf")).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir, "resolv.conf"), "utf8")).toBe("nameserver 10.0.0.1\n");
    expect(statSync(join(dir, "ssl")).mode & 0o777).toBe(0o755);
    expect(readlinkSync(join(dir, "ssl", "certs", "abcd1234.0"))).toBe("bundle.crt");
    expect(existsSync(join(dir, "shadow"))).toBe(false);
    release();
    copy.close();
    expect(existsSync(dir)).toBe(false);
  });

  it("a check finds nothing to do while the host is unchanged, and makes a new copy when an entry changed", async () => {
    const host = fakeHost();
    const copy = await copyOf(host);
    const first = copy.acquire();
    first.release();
    expect(await copy.check()).toBe(false);
    expect(copy.acquire().dir).toBe(first.dir);
    // A file replaced by rename (how editors and ConfigMaps write), and a certificate added.
    writeFileSync(join(host.root, "run", "resolv.conf.new"), "nameserver 10.0.0.2\n");
    renameSync(join(host.root, "run", "resolv.conf.new"), join(host.root, "run", "resolv.conf"));
    writeFileSync(join(host.etc, "ssl", "certs", "new.crt"), "CERT B\n");
    expect(await copy.check()).toBe(true);
    const second = copy.acquire();
    expect(second.dir).not.toBe(first.dir);
    expect(readFileSync(join(second.dir, "resolv.conf"), "utf8")).toBe("nameserver 10.0.0.2\n");
    expect(readFileSync(join(second.dir, "ssl", "certs", "new.crt"), "utf8")).toBe("CERT B\n");
    copy.close();
  });

  it("an in-place edit inside a whitelisted directory is found by the full check", async () => {
    const host = fakeHost();
    const copy = await copyOf(host);
    const before = copy.acquire();
    before.release();
    // Same size, written in place: the directory's stamp does not move, the file's does.
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(join(host.etc, "ssl", "certs", "bundle.crt"), "CERT Z\n");
    expect(await copy.check()).toBe(false);
    expect(await copy.check({ full: true })).toBe(true);
    expect(readFileSync(join(copy.acquire().dir, "ssl", "certs", "bundle.crt"), "utf8")).toBe("CERT Z\n");
    copy.close();
  });

  it("keeps an older copy while a sandbox started on it runs, deletes it once that sandbox is gone", async () => {
    const host = fakeHost();
    const copy = await copyOf(host);
    const running = copy.acquire();
    writeFileSync(join(host.etc, "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    expect(await copy.check()).toBe(true);
    const next = copy.acquire();
    expect(next.dir).not.toBe(running.dir);
    // The running sandbox's /etc is still whole.
    expect(readFileSync(join(running.dir, "passwd"), "utf8")).toBe("root:x:0:0:root:/root:/bin/bash\n");
    running.release();
    expect(existsSync(running.dir)).toBe(false);
    running.release(); // twice is once
    expect(existsSync(next.dir)).toBe(true);
    next.release();
    copy.close();
    expect(readdirSync(host.copies)).toEqual([]);
  });

  it("checks in the background when a sandbox starts QUICK_CHECK_MS after the last check, not before", async () => {
    const host = fakeHost();
    const clock = { t: 1_000 };
    const copy = await copyOf(host, clock);
    writeFileSync(join(host.etc, "passwd"), "root:x:0:0:root:/root:/bin/zsh\n");
    clock.t += EtcCopy.QUICK_CHECK_MS - 1;
    const early = copy.acquire();
    early.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(join(copy.acquire().dir, "passwd"), "utf8")).toContain("/bin/bash");
    clock.t += 1;
    const due = copy.acquire(); // this sandbox still binds the copy it got; the check runs after it
    due.release();
    expect(readFileSync(join(due.dir, "passwd"), "utf8")).toContain("/bin/bash");
    const deadline = Date.now() + 5_000;
    let seen = "";
    while (!seen.includes("/bin/zsh") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const next = copy.acquire();
      next.release();
      seen = readFileSync(join(next.dir, "passwd"), "utf8");
    }
    expect(seen).toContain("/bin/zsh");
    copy.close();
  });

  it("refuses to be made where it cannot write, so the executor can fall back to one bind per entry", async () => {
    const host = fakeHost();
    await expect(
      EtcCopy.create(host.entries, join(host.copies, "missing", "deeper"), { etcRoot: host.etc }),
    ).rejects.toThrow(/ENOENT/);
  });

  it("is made in $TMPDIR when it is set, else on /dev/shm (a tmpfs) when writable, else in the OS temporary directory", () => {
    expect(defaultEtcCopyParent({ TMPDIR: "/srv/tmp" })).toBe("/srv/tmp");
    expect(defaultEtcCopyParent({})).toBe(existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  });
});
