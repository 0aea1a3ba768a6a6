import { createRequire } from 'node:module';
import type { RESTOptions } from 'discord.js';

/**
 * An HTTP agent of discord.js's REST client's own. Without one, @discordjs/rest sends
 * through whatever sits in the process-wide undici dispatcher slot, which any library can replace
 * just by being imported (undici 8 did, and then refused discord.js's file uploads). The agent is
 * built from the very undici instance @discordjs/rest resolves, found the way Node resolves it for
 * discord.js, so its multipart bodies and its dispatcher always belong together.
 */
export function discordRestAgent(): NonNullable<RESTOptions['agent']> {
  const fromDiscordJs = createRequire(createRequire(import.meta.url).resolve('discord.js'));
  const fromRest = createRequire(fromDiscordJs.resolve('@discordjs/rest'));
  const { Agent } = fromRest('undici') as { Agent: new () => NonNullable<RESTOptions['agent']> };
  return new Agent();
}
