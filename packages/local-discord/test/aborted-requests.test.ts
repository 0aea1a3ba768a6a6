import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDiscord, type FakeDiscord } from '../src/server.ts';

// A bot killed or restarted while it sends a request (the playground's restart, a test's SIGKILL)
// leaves the local Discord with half a body. The server must shrug that off: in the playground an
// unhandled rejection would end the process that serves the page, the emulator and Discord itself.
describe('a client that goes away in the middle of a request', () => {
  let discord: FakeDiscord;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  beforeAll(async () => {
    discord = await startFakeDiscord();
    process.on('unhandledRejection', onRejection);
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    process.off('warning', onWarning);
    await discord.close();
  });

  it('GIVEN a POST whose body never arrives in full THEN nothing is left unhandled and the next request is answered', async () => {
    const { port } = new URL(discord.apiUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /api/v10/channels/1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Authorization: Bot ${discord.token}\r\nContent-Length: 1000\r\n\r\n{"content":"half`,
    );
    // The server has the headers and is reading the body when the client disappears.
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(rejections).toEqual([]);
    // Not the server's fault, so not reported as one either.
    expect(warnings.filter((w) => w.name === 'LocalDiscordWarning')).toEqual([]);
    const res = await fetch(`${discord.apiUrl}/gateway`);
    expect(res.status).toBe(200);
    expect(discord.requests.some((r) => r.path.startsWith('/channels/1/messages'))).toBe(false);
  });
});
