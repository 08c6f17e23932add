import { connect } from "node:net";

/**
 * Speaks just enough of the NATS and Redis wire protocols to ask "does this
 * server let me in?": tests of `moniro up` use it to show that the servers it
 * starts refuse a client without credentials. Answers the server's first
 * reply line after the handshake.
 */
function exchange(port: number, write: (send: (text: string) => void, first: string) => void, done: RegExp) {
  return new Promise<string>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    let received = "";
    let greeted = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from 127.0.0.1:${port}: ${received}`));
    }, 3_000);
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
      if (!greeted) {
        greeted = true;
        write((text) => socket.write(text), received);
      }
      const match = done.exec(received);
      if (match) {
        clearTimeout(timer);
        socket.destroy();
        resolve(match[0].trim());
      }
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * NATS: CONNECT (with user/password when given), then `commands` (protocol lines such as
 * `PUB <subject> 0\r\n\r\n` or `SUB <subject> 1\r\n`), then PING; `PONG` or the server's first
 * `-ERR …` (a refused login, or a permissions violation of one of the commands).
 */
export function natsAnswer(port: number, credentials?: { user: string; pass: string }, commands = ""): Promise<string> {
  const connectLine = JSON.stringify({ verbose: false, pedantic: false, ...credentials });
  return exchange(port, (send) => send(`CONNECT ${connectLine}\r\n${commands}PING\r\n`), /PONG|-ERR[^\r\n]*/);
}

function resp(...parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join("")}`;
}

/**
 * Redis: (AUTH user password when given, then) `commands` (each a command's words, e.g.
 * `["FLUSHALL"]`), then PING; `+PONG` or the first error reply (a refused login, or a command the
 * user may not run: `-NOPERM …`).
 */
export function redisAnswer(
  port: number,
  credentials?: { username: string; password: string },
  commands: string[][] = [],
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      const login = credentials ? resp("AUTH", credentials.username, credentials.password) : "";
      socket.write(login + commands.map((command) => resp(...command)).join("") + resp("PING"));
    });
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from 127.0.0.1:${port}: ${received}`));
    }, 3_000);
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
      // A reply's first line: +PONG, or an error (never a bulk string's data: the commands here write none starting with '-').
      const match = /(?:^|\r\n)(\+PONG|-[^\r\n]*)\r\n/.exec(received);
      if (match) {
        clearTimeout(timer);
        socket.destroy();
        resolve(match[1] as string);
      }
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
