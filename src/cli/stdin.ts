/**
 * The first line of standard input, without its line end (a password or a client secret piped in
 * or typed). Returns it; the rest of the input is ignored. Reads at most a little more than 8 KiB.
 */
export async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = chunk as Buffer;
    chunks.push(buffer);
    size += buffer.length;
    if (buffer.includes(10) || size > 8192) break;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const end = text.search(/\r?\n/);
  return end === -1 ? text : text.slice(0, end);
}
