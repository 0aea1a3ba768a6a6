import { once } from 'node:events';
import { DiscordAPIError, HTTPError, type ChatInputCommandInteraction, type Client } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

// The fake's error-path controls: injected REST faults, and interaction tokens that expire.
let skewMs = 0;
let fake: FakeDiscord;
let client: Client<true>;

beforeAll(async () => {
  fake = await startFakeDiscord({ clock: { now: () => Date.now() + skewMs } });
  // No retries, so one injected 5xx is one failed call.
  client = await loginClient(fake, { rest: { retries: 0 } });
});
afterAll(async () => {
  await client?.destroy();
  await fake?.close();
});

async function interaction() {
  const emitted = once(client, 'interactionCreate') as Promise<[ChatInputCommandInteraction]>;
  const handle = await fake.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: { id: DEFAULT_IDS.alice, username: 'alice' },
    name: 'say',
  });
  return { handle, interaction: (await emitted)[0] };
}

describe('injectFault', () => {
  it('fails the matching requests with the given status, then answers normally again', async () => {
    const { interaction: first } = await interaction();
    fake.injectFault({ method: 'POST', path: /\/callback$/, status: 500 });
    const error = await first.deferReply().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPError);
    expect(error).toMatchObject({ status: 500 });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', status: 500 });
    const { interaction: second } = await interaction();
    await second.deferReply();
    expect(fake.requests.at(-1)?.status).toBe(204);
  });

  it('answers with a Discord error body when given one', async () => {
    fake.injectFault({ path: /^\/channels\/\d+\/messages$/, status: 403, body: { message: 'Missing Access', code: 50001 } });
    const channel = await client.channels.fetch(DEFAULT_IDS.general);
    const error = await (channel as { send(c: string): Promise<unknown> }).send('hello').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ status: 403, code: 50001 });
  });
});

describe('interaction token lifetime', () => {
  it('edits work within 15 minutes and get 404 Unknown Webhook after', async () => {
    const { interaction: i } = await interaction();
    await i.deferReply();
    await i.editReply('in time');
    skewMs += 15 * 60_000 + 1_000;
    const error = await i.editReply('too late').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: 10015 });
  });
});
