import { readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApplicationCommandType } from 'discord.js';
import type { AnyCommand } from './command.ts';
import { BotError } from '../errors.ts';

// commands/ is grouped by feature: `commands/<feature>/<name>.ts` default-exports the slash command
// /<name>; the feature's other files (its Discord helpers) sit beside it and have no default
// export. What a command does that the dashboard does too is a use case (src/usecases); what is no
// single command's (events, delivery, dispatch, the request pipeline /say and /narrate share)
// stays in src/discord.
const COMMANDS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'commands');

// A message command (type 3, Apps on a message's menu) is named in words ("Fix reading", "Why
// wasn't this read?"): its file is that name in kebab case without punctuation (fix-reading.ts,
// why-wasnt-this-read.ts). Its modals answer through `modal.submit`.
function isCommand(value: unknown): value is AnyCommand {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as { data?: { name?: unknown; type?: unknown }; execute?: unknown; autocomplete?: unknown; modal?: unknown };
  const type = c.data?.type ?? ApplicationCommandType.ChatInput;
  const modal = c.modal as { id?: unknown; submit?: unknown } | undefined;
  return (
    typeof c.data === 'object' &&
    c.data !== null &&
    typeof c.data.name === 'string' &&
    typeof c.execute === 'function' &&
    (type === ApplicationCommandType.ChatInput
      ? c.autocomplete === undefined || typeof c.autocomplete === 'function'
      : type === ApplicationCommandType.Message &&
        c.autocomplete === undefined &&
        (modal === undefined || (typeof modal.id === 'string' && typeof modal.submit === 'function')))
  );
}

/** The file name a command's module has: its name, a message command's in kebab case without punctuation. */
function fileNameOf(command: AnyCommand): string {
  if (command.data.type !== ApplicationCommandType.Message) return command.data.name;
  return command.data.name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s+/g, '-');
}

/** Every `.ts` file below `dir`, ordered by file name (the registration order). */
function moduleFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...moduleFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  const key = (path: string) => `${basename(path)}\0${path}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Imports every module below `commands/`, checking each default export's shape and name (fails start-up loudly). */
export async function loadCommands(dir = COMMANDS_DIR): Promise<Map<string, AnyCommand>> {
  const commands = new Map<string, AnyCommand>();
  for (const path of moduleFiles(dir)) {
    const file = relative(dir, path);
    const mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    if (mod.default === undefined) continue; // a use case beside its command
    if (!isCommand(mod.default))
      throw new BotError('invalid_command_module', { message: `commands/${file} must default-export { data, execute } (a Command)` });
    if (fileNameOf(mod.default) !== basename(file, '.ts'))
      throw new BotError('invalid_command_module', { message: `commands/${file} must be named for its command /${mod.default.data.name}` });
    if (commands.has(mod.default.data.name))
      throw new BotError('duplicate_command', { message: `duplicate command name ${mod.default.data.name} in commands/${file}` });
    commands.set(mod.default.data.name, mod.default);
  }
  return commands;
}
