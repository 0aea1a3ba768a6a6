import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApplicationCommandOptionType as T,
  CommandInteractionOptionResolver,
  type ChatInputCommandInteraction,
  type CommandInteractionOption,
} from 'discord.js';
import { describe, expect, it } from 'vitest';
import { readArgs, runSubcommand } from '../../src/discord/interactions/command-args.ts';
import { choice, named, subcommand } from '../../src/discord/interactions/command.ts';
import { BotError } from '../../src/discord/errors.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';

// A command's arguments are read by the types its data declares, and its subcommands run through
// one handler each; the loader finds commands in their feature folders.

/** An interaction carrying these (already resolved) options, as discord.js hands them to a handler. */
function interaction(options: CommandInteractionOption[]): ChatInputCommandInteraction {
  // discord.js's own resolver (its constructor is private in the typings: the interaction builds it).
  const Resolver = CommandInteractionOptionResolver as unknown as new (
    client: unknown,
    options: CommandInteractionOption[],
    resolved: object,
  ) => unknown;
  return { options: new Resolver({}, options, {}) } as unknown as ChatInputCommandInteraction;
}

const options = [
  { type: T.String, ...named('text', '文章'), description: 'd', required: true },
  {
    type: T.String,
    ...named('model', 'モデル'),
    description: 'd',
    choices: [choice('flash', 'flash', 'flash'), choice('pro', 'pro', 'pro')],
  },
  { type: T.Integer, ...named('seed', 'シード'), description: 'd' },
  { type: T.Role, ...named('role', 'ロール'), description: 'd' },
] as const;

describe('readArgs', () => {
  it('GIVEN options of each declared type THEN each is read by its type, absent ones undefined', () => {
    const args = readArgs(
      interaction([
        { name: 'text', type: T.String, value: 'hello' },
        { name: 'model', type: T.String, value: 'pro' },
        { name: 'role', type: T.Role, value: '123456789012345678' },
      ]),
      options,
    );
    expect(args).toEqual({ text: 'hello', model: 'pro', seed: undefined, role: '123456789012345678' });
    const model: 'flash' | 'pro' | undefined = args.model;
    expect(model).toBe('pro');
  });

  it('GIVEN a required option missing THEN reading refuses', () => {
    expect(() => readArgs(interaction([]), options)).toThrow();
  });
});

describe('runSubcommand', () => {
  const data = {
    name: 'thing',
    options: [
      subcommand('add', '追加', 'd', 'd', [{ type: T.Integer, ...named('count', '数'), description: 'd', required: true }]),
      subcommand('list', '一覧', 'd', 'd'),
    ],
  } as const;

  it('GIVEN a subcommand THEN its handler runs with its own typed arguments', async () => {
    const ran: unknown[] = [];
    const handlers = {
      add: async ({ count }: { readonly count: number }) => void ran.push(['add', count]),
      list: async () => void ran.push(['list']),
    };
    await runSubcommand(
      interaction([{ name: 'add', type: T.Subcommand, options: [{ name: 'count', type: T.Integer, value: 3 }] }]),
      data,
      handlers,
    );
    await runSubcommand(interaction([{ name: 'list', type: T.Subcommand, options: [] }]), data, handlers);
    expect(ran).toEqual([['add', 3], ['list']]);
  });

  it('GIVEN a subcommand the data does not declare THEN an unknown_subcommand error', async () => {
    const run = runSubcommand(interaction([{ name: 'toString', type: T.Subcommand, options: [] }]), data, {
      add: async () => {},
      list: async () => {},
    });
    await expect(run).rejects.toSatisfy((e) => e instanceof BotError && e.code === 'unknown_subcommand');
  });
});

describe('loadCommands', () => {
  const command = (name: string) => `export default { data: { name: '${name}', description: 'd' }, async execute() {} };\n`;
  const tree = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'commands-'));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };

  it('GIVEN feature folders THEN every command in them, by file name, and their use cases are not commands', async () => {
    const dir = tree({
      'b/zeta.ts': command('zeta'),
      'b/use-case.ts': 'export const x = 1;\n',
      'a/alpha.ts': command('alpha'),
      'top.ts': command('top'),
    });
    expect([...(await loadCommands(dir)).keys()]).toEqual(['alpha', 'top', 'zeta']);
  });

  it('GIVEN a message command THEN it is loaded from the file named for it in kebab case, its modal checked too', async () => {
    const message = (name: string, modal = '') => `export default { data: { type: 3, name: '${name}' }, async execute() {}${modal} };\n`;
    expect([...(await loadCommands(tree({ 'a/fix-reading.ts': message('Fix reading') }))).keys()]).toEqual(['Fix reading']);
    await expect(loadCommands(tree({ 'a/fix.ts': message('Fix reading') }))).rejects.toThrow('commands/a/fix.ts must be named');
    await expect(loadCommands(tree({ 'a/fix-reading.ts': message('Fix reading', ', modal: { id: 1 }') }))).rejects.toThrow(
      'commands/a/fix-reading.ts must default-export',
    );
    // A name with punctuation: its file drops it (an apostrophe or a question mark in a file name helps nobody).
    const asked = tree({ 'a/why-wasnt-this-read.ts': message("Why wasn\\'t this read?") });
    expect([...(await loadCommands(asked)).keys()]).toEqual(["Why wasn't this read?"]);
  });

  it('GIVEN a default export that is no Command, or a command in a file of another name THEN start-up fails naming the file', async () => {
    await expect(loadCommands(tree({ 'a/bad.ts': 'export default { data: {} };\n' }))).rejects.toThrow('commands/a/bad.ts');
    await expect(loadCommands(tree({ 'a/other.ts': command('alpha') }))).rejects.toThrow(
      'commands/a/other.ts must be named for its command /alpha',
    );
  });
});
