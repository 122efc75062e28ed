import type { AddressInfo } from 'node:net';

/** The README's quick start: the two commands that create the first institute and user. */
export const FIRST_USER_COMMANDS = [
  './bin/invigil institute create --name "Example University" --short-name EXU',
  './bin/invigil user create --institute 1 --email office@example.org --name "Exam Office" --role administrator',
] as const;

/** The address a server listens on as a URL (`http://127.0.0.1:3000`, IPv6 in brackets). */
export function listeningUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * What `invigil serve` (and so `npm start`) tells the person who started it, beside the JSON log:
 * one line with the address and the console's, and on an installation without users the commands
 * that create the first one. Returns the text, ending in a newline.
 */
export function welcomeText(url: string, hasUsers: boolean): string {
  const lines = [`Invigil is listening on ${url} (console: ${url}/console)`];
  if (!hasUsers) {
    lines.push(
      'No users yet. Create an institute and a first administrator (README.md, "Quick start"):',
      ...FIRST_USER_COMMANDS.map((command) => `  ${command}`),
    );
  }
  return `${lines.join('\n')}\n`;
}
