/** Logs a real discord.js Client into a fake Discord. */
import { once } from 'node:events';
import { Client, GatewayIntentBits, type ClientOptions } from 'discord.js';
import { discordRestAgent } from '../../src/discord/rest-agent.ts';
import type { FakeDiscord } from '../../src/local-discord/server.ts';

export const BOT_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.GuildVoiceStates,
  GatewayIntentBits.GuildMembers,
];

/**
 * A logged-in Client that has emitted clientReady (caller destroys it). Its REST client has its
 * own agent, as the bot's has: test files share workers, and one that imports undici (the TTS CLI)
 * replaces the process-wide dispatcher, which then refuses discord.js's uploads (issue 9 §1).
 */
export async function loginClient(fake: FakeDiscord, options: Partial<ClientOptions> = {}): Promise<Client<true>> {
  const client = new Client({ intents: BOT_INTENTS, ...options, rest: { api: fake.apiUrl, agent: discordRestAgent(), ...options.rest } });
  const ready = once(client, 'clientReady');
  await client.login(fake.token);
  await ready;
  return client as Client<true>;
}
