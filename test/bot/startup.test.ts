import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { botPermissions } from '../../src/discord/invite.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';

const run = promisify(execFile);
const JAPANESE = /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u;
// Run exactly what a user runs (npm scripts), with this test's Node first on PATH.
const npm = (args: string[], env: NodeJS.ProcessEnv) =>
  run('npm', ['--silent', ...args], { env: { ...env, PATH: `${process.execPath.replace(/\/node$/, '')}:${env.PATH ?? ''}` } });

function withoutSecrets(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['DISCORD_TOKEN', 'DISCORD_API_URL', 'TTS_TOKEN', 'TTS_BASE_URL']) delete env[k];
  return env;
}

describe('npm start', () => {
  it('exits non-zero naming DISCORD_TOKEN when it is missing', async () => {
    const env = { ...withoutSecrets(), TTS_TOKEN: 'a'.repeat(64) };
    const result = await npm(['start'], env).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('DISCORD_TOKEN');
    expect(result.stderr).toContain('.env.example');
  });

  it('names a malformed variable without echoing its value', async () => {
    const env = { ...withoutSecrets(), DISCORD_TOKEN: 'abc.def.ghi', TTS_TOKEN: 'short-secret-value', TTS_PLAN: 'gold' };
    const result = await npm(['start'], env).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('TTS_TOKEN');
    expect(result.stderr).toContain('TTS_PLAN');
    expect(result.stderr).not.toContain('short-secret-value');
  });
});

describe('npm run deploy-commands', () => {
  let discord: FakeDiscord;
  beforeAll(async () => {
    discord = await startFakeDiscord();
  });
  afterAll(async () => discord?.close());

  it('registers every command with ja localisations in one bulk overwrite, and is safe to repeat', async () => {
    const env = { ...withoutSecrets(), DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl };
    const { stdout } = await npm(['run', 'deploy-commands'], env);
    await npm(['run', 'deploy-commands'], env);
    // Then the URL that adds it to a server: this application, the bot and its commands, the permissions of invite.ts's table.
    const invite = `https://discord.com/oauth2/authorize?client_id=${discord.applicationId}&scope=bot+applications.commands&permissions=${botPermissions()}`;
    expect(stdout).toContain(`Add the bot to a server: ${invite}\n`);
    const puts = discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/commands'));
    expect(puts).toHaveLength(2);
    const expected = [...(await loadCommands()).keys()].sort();
    const registered = discord.commands.global;
    expect(registered.map((c) => c.name).sort()).toEqual(expected);
    expect(expected).toEqual(
      expect.arrayContaining([
        'say',
        'narrate',
        'join',
        'leave',
        'skip',
        'clear',
        'autoread',
        'config',
        'voice',
        'dictionary',
        'usage',
        'help',
        'spend',
      ]),
    );
    // Registered as each command declares it, localisations and all...
    const declared = await loadCommands();
    for (const command of registered)
      expect(command, command.name).toMatchObject(JSON.parse(JSON.stringify(declared.get(command.name)!.data)) as object);
    // The message command (Apps on a message's menu) is registered with its ja and en names, no description.
    const fix = registered.find((c) => c.name === 'Fix reading');
    expect(fix).toMatchObject({
      type: 3,
      description: '',
      name_localizations: { ja: '読みを修正', 'en-US': 'Fix reading' },
      contexts: [0],
    });
    // ...and every Japanese name and description is Japanese text (a choice may keep a proper name: the voices).
    for (const command of registered) {
      expect(command.name_localizations?.ja, command.name).toMatch(JAPANESE);
      if (command.type === 3) continue; // a message command has no description or options
      expect(command.description_localizations?.ja, command.name).toMatch(JAPANESE);
      for (const option of command.options ?? []) {
        expect(option.name_localizations?.ja, `${command.name} ${option.name}`).toMatch(JAPANESE);
        expect(option.description_localizations?.ja, `${command.name} ${option.name}`).toMatch(JAPANESE);
        for (const sub of 'options' in option ? (option.options ?? []) : [])
          expect(sub.name_localizations?.ja, `${command.name} ${option.name} ${sub.name}`).toMatch(JAPANESE);
        for (const c of 'choices' in option ? (option.choices ?? []) : []) {
          const ja = c.name_localizations?.ja ?? '';
          expect(JAPANESE.test(ja) || ja === c.name, `${command.name} ${option.name} choice ${c.name}: ${ja}`).toBe(true);
        }
      }
    }
    // Admin commands are hidden from members without Manage Server by default.
    for (const name of ['autoread', 'config', 'spend'])
      expect(registered.find((c) => c.name === name)?.default_member_permissions).toBe('32');
    // Every command is offered in servers only, /help included: a DM has no voice to read in.
    for (const command of registered) expect(command.contexts, command.name).toEqual([0]);
  });

  it('checks DISCORD_TOKEN by the same rules as npm start, without needing TTS_TOKEN', async () => {
    const env = { ...withoutSecrets(), DISCORD_TOKEN: 'not-a-token', DISCORD_API_URL: discord.apiUrl };
    const from = discord.requests.length;
    const outcome = (run: Promise<unknown>) =>
      run.then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
    const [deploy, start] = await Promise.all([
      outcome(npm(['run', 'deploy-commands'], env)),
      outcome(npm(['start'], { ...env, TTS_TOKEN: 'a'.repeat(64) })),
    ]);
    expect(deploy.code).not.toBe(0);
    expect(start.code).not.toBe(0);
    const reason = 'DISCORD_TOKEN: does not look like a bot token';
    expect(start.stderr).toContain(reason);
    expect(deploy.stderr).toContain(reason);
    expect(deploy.stderr).not.toContain('not-a-token');
    expect(discord.requests.slice(from)).toEqual([]); // refused before anything was sent
  });

  it('registers for one guild with --guild', async () => {
    const env = { ...withoutSecrets(), DISCORD_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl };
    const { stdout } = await npm(['run', 'deploy-commands', '--', '--guild', discord.guilds[0]!.id], env);
    expect(stdout).toContain('in guild');
    expect(discord.commands.guild[discord.guilds[0]!.id]?.length).toBe((await loadCommands()).size);
  });
});
