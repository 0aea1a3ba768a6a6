/**
 * Run as a child process by test/bot/import-order.test.ts: the test runner loads
 * node:http before any test, which hid the fault, so this starts from a bare process and imports
 * in the order `npm start` does. Prints one JSON line: what discord.js's REST sent through, and
 * whether an upload arrived.
 *
 *   node import-order-child.ts plain    REST without an agent of its own, the reproduction
 *   node import-order-child.ts hostile  some library replaced the global dispatcher; the bot's REST agent
 *   node import-order-child.ts hostile-plain  the same without the agent (the control: this must fail)
 */
const mode = process.argv[2] ?? 'plain';
const SLOT = Symbol.for('undici.globalDispatcher.1');
const slot = () => (globalThis as Record<symbol, unknown>)[SLOT];

const { REST } = await import('discord.js');
const rest = new REST({
  retries: 0,
  ...(mode === 'hostile' ? { agent: (await import('../../src/discord/rest-agent.ts')).discordRestAgent() } : {}),
}).setToken('a.b.c');
const before = slot();
// Everything the bot imports (the TTS client included), before node:http, as in production.
await import('../../src/tts/http.ts');
await import('../../src/tts/download.ts');
await import('../../src/bot.ts');
const slotUnchanged = slot() === before;
if (mode.startsWith('hostile')) {
  // What undici 8 did on import: a dispatcher that refuses discord.js's FormData, process-wide.
  const undici = await import('undici');
  undici.setGlobalDispatcher(new undici.Agent());
}

const { createServer } = await import('node:http');
const server = createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: '1', bytes, multipart: String(req.headers['content-type']).startsWith('multipart/form-data') }));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const { port } = server.address() as { port: number };
rest.options.api = `http://127.0.0.1:${port}/api`;
let result: Record<string, unknown>;
try {
  const answer = await rest.post('/channels/1/messages', {
    body: { content: 'x' },
    files: [{ name: 'a.mp3', data: Buffer.from('ID3 audio bytes') }],
  });
  result = { ok: true, answer };
} catch (error) {
  result = { ok: false, error: (error as Error).message };
}
server.close();
console.log(JSON.stringify({ ...result, slotUnchanged }));
process.exit(0);
