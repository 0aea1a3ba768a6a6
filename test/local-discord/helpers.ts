/** Logs a real discord.js Client into a fake Discord. */
import { once } from 'node:events';
import { Client, GatewayIntentBits, type ClientOptions } from 'discord.js';
import type { FakeDiscord } from '../../src/local-discord/server.ts';

export const BOT_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.GuildVoiceStates,
  GatewayIntentBits.GuildMembers,
];

/** A logged-in Client that has emitted clientReady (caller destroys it). */
export async function loginClient(fake: FakeDiscord, options: Partial<ClientOptions> = {}): Promise<Client<true>> {
  const client = new Client({ intents: BOT_INTENTS, ...options, rest: { api: fake.apiUrl, ...options.rest } });
  const ready = once(client, 'clientReady');
  await client.login(fake.token);
  await ready;
  return client as Client<true>;
}
