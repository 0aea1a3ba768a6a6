/** Logs a real discord.js Client into a fake Discord. */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Client, GatewayIntentBits, type ClientOptions, type RESTOptions } from 'discord.js';
import type { FakeDiscord } from '../src/server.ts';

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
 * replaces the process-wide dispatcher, which then refuses discord.js's uploads.
 */
export async function loginClient(fake: FakeDiscord, options: Partial<ClientOptions> = {}, token = fake.token): Promise<Client<true>> {
  const client = new Client({ intents: BOT_INTENTS, ...options, rest: { api: fake.apiUrl, agent: restAgent(), ...options.rest } });
  const ready = once(client, 'clientReady');
  await client.login(token);
  await ready;
  return client as Client<true>;
}

/**
 * An agent from the undici that discord.js's REST client itself resolves, so its multipart bodies
 * and its dispatcher belong together (the bot builds its own the same way).
 */
function restAgent(): NonNullable<RESTOptions['agent']> {
  const fromDiscordJs = createRequire(createRequire(import.meta.url).resolve('discord.js'));
  const fromRest = createRequire(fromDiscordJs.resolve('@discordjs/rest'));
  const { Agent } = fromRest('undici') as { Agent: new () => NonNullable<RESTOptions['agent']> };
  return new Agent();
}
