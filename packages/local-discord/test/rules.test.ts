import { once } from 'node:events';
import { MessageFlags, type ChatInputCommandInteraction, type Client } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

let fake: FakeDiscord | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.destroy();
  client = undefined;
  await fake?.close();
  fake = undefined;
});

async function slash(f: FakeDiscord, c: Client, name: string) {
  const emitted = once(c, 'interactionCreate') as Promise<[ChatInputCommandInteraction]>;
  const handle = await f.sendInteraction({ channelId: DEFAULT_IDS.general, user: { id: DEFAULT_IDS.alice, username: 'alice' }, name });
  return { handle, interaction: (await emitted)[0] };
}

describe('Discord rules the fake enforces', () => {
  it('with a deadline configured, a callback later than it (by the injected clock) is an Unknown interaction', async () => {
    // The local Discord only reads the time: a clock moved by hand.
    let now = 1_700_000_000_000;
    const clock = { now: () => now };
    fake = await startFakeDiscord({ clock, interactionCallbackDeadlineMs: 3_000 });
    client = await loginClient(fake);
    const late = await slash(fake, client, 'say');
    now += 3_001;
    await expect(late.interaction.reply('too late')).rejects.toMatchObject({ code: 10062 });
    expect(late.handle.responses()).toEqual([]);
    const onTime = await slash(fake, client, 'say');
    now += 2_000;
    await onTime.interaction.deferReply();
    expect(onTime.handle.responses()[0]).toMatchObject({ kind: 'callback', type: 5 });
  });

  it('withResponse returns the callback resource with the message', async () => {
    fake = await startFakeDiscord();
    client = await loginClient(fake);
    const { handle, interaction } = await slash(fake, client, 'say');
    const response = await interaction.deferReply({ flags: MessageFlags.Ephemeral, withResponse: true });
    expect(response.interaction.id).toBe(handle.id);
    expect(response.resource?.message?.id).toBe(handle.original()?.id);
    expect(fake.requests.at(-1)?.query).toMatchObject({ with_response: 'true' });
  });

  it('a bot without Send Messages in the guild gets 403 Missing Permissions', async () => {
    const guild = defaultGuild();
    for (const role of guild.roles) role.permissions = (BigInt(role.permissions) & ~(1n << 11n)).toString();
    fake = await startFakeDiscord({ guilds: [guild] });
    client = await loginClient(fake);
    const channel = client.channels.cache.get(DEFAULT_IDS.general);
    if (!channel?.isSendable()) throw new Error('not sendable');
    await expect(channel.send('hello')).rejects.toMatchObject({ status: 403, code: 50013 });
    expect(fake.messages).toEqual([]);
  });

  it('uploads over the size limit are refused with 413 (40005)', async () => {
    fake = await startFakeDiscord({ maxUploadBytes: 1024 });
    client = await loginClient(fake);
    const { interaction } = await slash(fake, client, 'say');
    await expect(interaction.reply({ files: [{ attachment: Buffer.alloc(1025), name: 'big.mp3' }] })).rejects.toMatchObject({
      code: 40005,
    });
  });
});
