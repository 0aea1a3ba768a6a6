/**
 * Run as a child process by test/bot/import-order.test.ts: the test runner loads
 * node:http before any test, which hid the fault, so this starts from a bare process and imports
 * in the order `npm start` does. Prints one JSON line with three uploads through discord.js's REST
 * and whether importing the bot changed the process-wide undici dispatcher slot:
 *
 *   plain          REST without an agent of its own, after every bot module was imported (the fault's reproduction)
 *   hostilePlain   the same REST once some library replaced the global dispatcher (the control: this must fail)
 *   hostile        REST with the bot's agent, at the same moment (must still upload)
 *
 * One process for the three (a bot import costs about 0.5 s of CPU): the two hostile uploads come
 * after the plain one, so each sees exactly the dispatcher slot it is about.
 */
const SLOT = Symbol.for('undici.globalDispatcher.1');
const slot = () => (globalThis as Record<symbol, unknown>)[SLOT];

const { REST } = await import('discord.js');
const plain = new REST({ retries: 0 }).setToken('a.b.c');
const before = slot();
// Everything the bot imports (the TTS client included), before node:http, as in production.
await import('../../src/tts/http.ts');
await import('../../src/tts/download.ts');
await import('../../src/bot.ts');
const slotUnchanged = slot() === before;
// The bot makes its REST agent once its modules are loaded, as createBot does.
const withAgent = new REST({ retries: 0, agent: (await import('../../src/discord/rest-agent.ts')).discordRestAgent() }).setToken('a.b.c');

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

async function upload(rest: InstanceType<typeof REST>): Promise<Record<string, unknown>> {
  rest.options.api = `http://127.0.0.1:${port}/api`;
  try {
    const answer = await rest.post('/channels/1/messages', {
      body: { content: 'x' },
      files: [{ name: 'a.mp3', data: Buffer.from('ID3 audio bytes') }],
    });
    return { ok: true, answer };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

const plainResult = await upload(plain);
// What undici 8 did on import: a dispatcher that refuses discord.js's FormData, process-wide.
const undici = await import('undici-8');
undici.setGlobalDispatcher(new undici.Agent());
const hostilePlain = await upload(plain);
const hostile = await upload(withAgent);
server.close();
console.log(JSON.stringify({ plain: plainResult, hostilePlain, hostile, slotUnchanged }));
process.exit(0);
