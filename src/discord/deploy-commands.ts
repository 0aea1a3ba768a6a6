import { parseArgs } from 'node:util';
import { ConfigError, loadDiscordConfig } from '../config.ts';

// `npm run deploy-commands [-- --guild ID]`: registers every command in one bulk overwrite (PUT),
// globally or for one guild (instant, for testing). Safe to repeat: the PUT replaces the whole set.
// The Discord variables are checked by the same rules as `npm start` (src/config.ts). Ends with the
// URL that adds the bot to a server with the permissions its features need (invite.ts).
let discord;
try {
  discord = loadDiscordConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const { values } = parseArgs({ options: { guild: { type: 'string' } } });
// discord.js and the commands (most of the CPU of a run) only once the variables are valid.
const [{ ApplicationCommandType, REST, Routes }, { loadCommands }, { inviteUrl }, { discordRestAgent }] = await Promise.all([
  import('discord.js'),
  import('./interactions/loader.ts'),
  import('./invite.ts'),
  import('./rest-agent.ts'),
]);

const commands = await loadCommands();
const body = [...commands.values()].map((c) => c.data);
const rest = new REST({ agent: discordRestAgent(), ...(discord.apiUrl ? { api: discord.apiUrl } : {}) }).setToken(discord.token);
try {
  const app = (await rest.get(Routes.currentApplication())) as { id: string };
  const route = values.guild ? Routes.applicationGuildCommands(app.id, values.guild) : Routes.applicationCommands(app.id);
  const result = (await rest.put(route, { body })) as unknown[];
  console.log(
    `Registered ${result.length} commands ${values.guild ? `in guild ${values.guild}` : 'globally'}: ${body.map((c) => (c.type === ApplicationCommandType.Message ? `[${c.name}]` : `/${c.name}`)).join(' ')}`,
  );
  console.log(`Add the bot to a server: ${inviteUrl(app.id)}`);
} catch (error) {
  console.error(`Registering commands failed: ${(error as Error).message}`);
  process.exit(1);
}
