import { parseArgs } from 'node:util';
import { REST, Routes } from 'discord.js';
import { z } from 'zod';
import { loadCommands } from './loader.ts';

// `npm run deploy-commands [-- --guild ID]`: registers every command in one bulk overwrite (PUT),
// globally or for one guild (instant, for testing). Safe to repeat: the PUT replaces the whole set.
const env = z
  .object({
    DISCORD_TOKEN: z.string({ error: 'DISCORD_TOKEN is required (see .env.example)' }).min(1, 'DISCORD_TOKEN is required (see .env.example)'),
    DISCORD_API_URL: z.url({ error: 'DISCORD_API_URL must be a URL (see .env.example)' }).optional(),
  })
  .safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v)));
if (!env.success) {
  console.error(env.error.issues.map((i) => i.message).join('\n'));
  process.exit(1);
}
const { values } = parseArgs({ options: { guild: { type: 'string' } } });

const commands = await loadCommands();
const body = [...commands.values()].map((c) => c.data);
const rest = new REST(env.data.DISCORD_API_URL ? { api: env.data.DISCORD_API_URL } : {}).setToken(env.data.DISCORD_TOKEN);
try {
  const app = (await rest.get(Routes.currentApplication())) as { id: string };
  const route = values.guild ? Routes.applicationGuildCommands(app.id, values.guild) : Routes.applicationCommands(app.id);
  const result = (await rest.put(route, { body })) as unknown[];
  console.log(`Registered ${result.length} commands ${values.guild ? `in guild ${values.guild}` : 'globally'}: ${body.map((c) => `/${c.name}`).join(' ')}`);
} catch (error) {
  console.error(`Registering commands failed: ${(error as Error).message}`);
  process.exit(1);
}
