import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from './command.ts';
import { BotError } from './errors.ts';

const COMMANDS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'commands');

function isCommand(value: unknown): value is Command {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Partial<Command>;
  return (
    typeof c.data === 'object' && c.data !== null && typeof c.data.name === 'string' &&
    typeof c.execute === 'function' && (c.autocomplete === undefined || typeof c.autocomplete === 'function')
  );
}

/** Imports every `commands/*.ts`, checking each default export's shape (fails start-up loudly). */
export async function loadCommands(dir = COMMANDS_DIR): Promise<Map<string, Command>> {
  const commands = new Map<string, Command>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { default?: unknown };
    if (!isCommand(mod.default)) throw new BotError('invalid_command_module', { message: `commands/${file} must default-export { data, execute } (a Command)` });
    if (commands.has(mod.default.data.name)) throw new BotError('duplicate_command', { message: `duplicate command name ${mod.default.data.name} in commands/${file}` });
    commands.set(mod.default.data.name, mod.default);
  }
  return commands;
}
