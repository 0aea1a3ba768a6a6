import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadDiscordConfig } from '../src/config.ts';
import { CodedError } from '@yomiage/coded-error';

const REQUIRED = { DISCORD_TOKEN: 'aaaa.bbbb.cccc', TTS_TOKEN: 'x'.repeat(64) };

describe('MAX_PENDING_PER_MEMBER counts characters', () => {
  it('GIVEN nothing set THEN 500 characters', () => {
    expect(loadConfig(REQUIRED).limits.maxPendingCharsPerMember).toBe(500);
  });

  it('GIVEN an old message count such as 5 THEN start-up refuses, saying it counts characters now', () => {
    let caught: unknown;
    try {
      loadConfig({ ...REQUIRED, MAX_PENDING_PER_MEMBER: '5' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variables).toEqual(['MAX_PENDING_PER_MEMBER']);
    expect((caught as ConfigError).code).toBe('config_invalid');
    expect(caught).toBeInstanceOf(CodedError);
    expect((caught as Error).message).toContain('counts characters');
  });
});

describe('the Discord variables', () => {
  it('GIVEN the same environment THEN deploy-commands and npm start read the same Discord settings, without TTS_TOKEN', () => {
    const env = { DISCORD_TOKEN: 'aaaa.bbbb.cccc', DISCORD_API_URL: 'http://127.0.0.1:1/api' };
    expect(loadDiscordConfig(env)).toEqual(loadConfig({ ...env, TTS_TOKEN: 'x'.repeat(64) }).discord);
    expect(() => loadDiscordConfig({ DISCORD_TOKEN: 'one-part' })).toThrow(/DISCORD_TOKEN: does not look like a bot token/);
  });

  it('GIVEN several bad variables THEN one ConfigError names each on its own line, never echoing a value', () => {
    const secret = 'not-a-token-but-secret';
    let caught: unknown;
    try {
      loadConfig({ DISCORD_TOKEN: secret, TTS_TOKEN: 'short', TTS_PLAN: 'gold' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.name).toBe('ConfigError');
    expect(error.variables.sort()).toEqual(['DISCORD_TOKEN', 'TTS_PLAN', 'TTS_TOKEN']);
    expect(error.message).toMatch(/^Invalid configuration:\n {2}\w+: /);
    expect(error.message).toContain('  TTS_PLAN: must be "free" or "paid"\n');
    expect(error.message).toMatch(/See \.env\.example for every variable and its meaning\.$/);
    expect(error.message).not.toContain(secret);
  });
});

describe('EXTRA_DISCORD_TOKENS: the extra bot accounts', () => {
  const problem = (extra: string) => {
    try {
      loadConfig({ ...REQUIRED, EXTRA_DISCORD_TOKENS: extra });
    } catch (error) {
      return { variables: (error as ConfigError).variables, message: (error as Error).message };
    }
    return undefined;
  };

  it('GIVEN nothing set THEN no extra account; GIVEN two tokens with spaces THEN both, trimmed, in order', () => {
    expect(loadConfig(REQUIRED).discord.extraTokens).toEqual([]);
    expect(loadConfig({ ...REQUIRED, EXTRA_DISCORD_TOKENS: ' dddd.eeee.ffff , gggg.hhhh.iiii' }).discord.extraTokens).toEqual([
      'dddd.eeee.ffff',
      'gggg.hhhh.iiii',
    ]);
  });

  it('GIVEN a malformed, a repeated or the main token THEN start-up refuses naming the variable and the position, never the value', () => {
    const bad = problem('dddd.eeee.ffff,secret-but-malformed');
    expect(bad?.variables).toEqual(['EXTRA_DISCORD_TOKENS']);
    expect(bad?.message).toContain('token 2 of 2 does not look like a bot token');
    expect(bad?.message).not.toContain('secret-but-malformed');
    expect(problem('dddd.eeee.ffff,dddd.eeee.ffff')?.message).toContain('EXTRA_DISCORD_TOKENS: lists the same token twice');
    const main = problem(`dddd.eeee.ffff,${REQUIRED.DISCORD_TOKEN}`);
    expect(main?.message).toContain('EXTRA_DISCORD_TOKENS: lists DISCORD_TOKEN');
    expect(main?.message).not.toContain(REQUIRED.DISCORD_TOKEN);
  });
});

describe('URLs a token travels to: plain http only to this machine', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig({ ...REQUIRED, ...env });
    } catch (error) {
      return { variables: (error as ConfigError).variables, message: (error as Error).message };
    }
    return undefined;
  };

  it('GIVEN http:// to another host THEN start-up refuses, naming the variable; deploy-commands too', () => {
    for (const variable of ['TTS_BASE_URL', 'DISCORD_API_URL', 'ERROR_WEBHOOK_URL']) {
      const refused = refusal({ [variable]: 'http://example.com/api' });
      expect(refused?.variables, variable).toEqual([variable]);
      expect(refused?.message).toContain(`${variable}: must be https`);
      expect(refused?.message).not.toContain('example.com');
    }
    const deploy = { DISCORD_TOKEN: 'aaaa.bbbb.cccc', DISCORD_API_URL: 'http://example.com/api' };
    expect(() => loadDiscordConfig(deploy)).toThrow(/DISCORD_API_URL: must be https/);
  });

  it('GIVEN http:// to a loopback host, or https:// anywhere THEN accepted', () => {
    const urls = ['http://127.0.0.1:8080', 'http://127.1.2.3', 'http://localhost:3000/api', 'http://[::1]:9/x', 'https://example.com'];
    for (const url of urls) {
      const config = loadConfig({ ...REQUIRED, TTS_BASE_URL: url, DISCORD_API_URL: url, ERROR_WEBHOOK_URL: url });
      expect([config.tts.baseUrl, config.discord.apiUrl, config.ops.errorWebhookUrl]).toEqual([url, url, url]);
    }
  });
});

describe('shards and what hosts share', () => {
  const problem = (env: Record<string, string>) => {
    try {
      loadConfig({ ...REQUIRED, ...env });
    } catch (error) {
      return { variables: (error as ConfigError).variables, message: (error as Error).message };
    }
    return undefined;
  };

  it('GIVEN nothing set THEN one shard in one process, and nothing shared: exactly as before', () => {
    expect(loadConfig(REQUIRED).sharding).toEqual({ count: undefined, ids: undefined, processes: 1 });
    expect(loadConfig(REQUIRED).shared).toEqual({ accountLedgerUrl: undefined, rateStoreUrl: undefined });
  });

  it('GIVEN a count, a range and processes THEN they are read; auto stays for start-up to resolve', () => {
    expect(loadConfig({ ...REQUIRED, SHARD_COUNT: '8', SHARD_IDS: '4-7', SHARD_PROCESSES: '2' }).sharding).toEqual({
      count: 8,
      ids: [4, 5, 6, 7],
      processes: 2,
    });
    expect(loadConfig({ ...REQUIRED, SHARD_COUNT: 'auto' }).sharding.count).toBe('auto');
  });

  it('GIVEN shard variables that cannot work together THEN the one at fault is named', () => {
    expect(problem({ SHARD_IDS: '0' })?.variables).toEqual(['SHARD_IDS']);
    expect(problem({ SHARD_COUNT: '4', SHARD_IDS: '3-5' })).toMatchObject({
      variables: ['SHARD_IDS'],
      message: expect.stringContaining('SHARD_COUNT is 4'),
    });
    expect(problem({ SHARD_COUNT: '2', SHARD_PROCESSES: '3' })?.variables).toEqual(['SHARD_PROCESSES']);
    expect(problem({ SHARD_COUNT: 'many' })?.variables).toEqual(['SHARD_COUNT']);
    expect(problem({ SHARD_COUNT: '2', SHARD_IDS: '1-0' })?.variables).toEqual(['SHARD_IDS']);
  });

  it('GIVEN VOICE_WORKERS THEN that many voice threads, 0 keeping voice on the main thread; unset: at least one; nonsense is named', () => {
    expect(loadConfig(REQUIRED).voiceWorkers).toBeGreaterThanOrEqual(1);
    expect(loadConfig({ ...REQUIRED, VOICE_WORKERS: '0' }).voiceWorkers).toBe(0);
    expect(loadConfig({ ...REQUIRED, VOICE_WORKERS: '3' }).voiceWorkers).toBe(3);
    expect(problem({ VOICE_WORKERS: 'two' })).toMatchObject({
      variables: ['VOICE_WORKERS'],
      message: expect.stringContaining('whole number'),
    });
    expect(problem({ VOICE_WORKERS: '65' })).toMatchObject({
      variables: ['VOICE_WORKERS'],
      message: expect.stringContaining('at most 64'),
    });
  });

  it('GIVEN a URL that is not PostgreSQL THEN it is refused without echoing it (it may hold a password)', () => {
    const url = 'mysql://user:hunter2@db:3306/x';
    const p = problem({ ACCOUNT_LEDGER_URL: url, RATE_STORE_URL: 'postgres://u:pw@127.0.0.1:5432/db' });
    expect(p?.variables).toEqual(['ACCOUNT_LEDGER_URL']);
    expect(p?.message).not.toContain('hunter2');
  });
});

describe("the operator's ceilings on what server admins may set", () => {
  it('GIVEN none set THEN each is the matching default (roles: the server ceiling), so nothing is raised', () => {
    expect(loadConfig(REQUIRED).limits.ceilings).toEqual({ guildMonthlyLimit: 3_000, userMonthlyLimit: 1_000, roleMonthlyLimit: 3_000 });
    const raised = loadConfig({ ...REQUIRED, GUILD_MONTHLY_CHARS: '4000', USER_MONTHLY_CHARS: '500' }).limits.ceilings;
    expect(raised).toEqual({ guildMonthlyLimit: 4_000, userMonthlyLimit: 500, roleMonthlyLimit: 4_000 });
  });

  it('GIVEN ceilings set THEN they are read', () => {
    const env = { ...REQUIRED, GUILD_MONTHLY_CHARS_MAX: '50000', USER_MONTHLY_CHARS_MAX: '2000', ROLE_MONTHLY_CHARS_MAX: '8000' };
    expect(loadConfig(env).limits.ceilings).toEqual({ guildMonthlyLimit: 50_000, userMonthlyLimit: 2_000, roleMonthlyLimit: 8_000 });
  });

  it('GIVEN a ceiling below its default THEN start-up refuses, naming the variable and the default', () => {
    const fails = (env: Record<string, string>) => {
      try {
        loadConfig({ ...REQUIRED, ...env });
      } catch (error) {
        return { variables: (error as ConfigError).variables, message: (error as Error).message };
      }
      throw new Error('expected a ConfigError');
    };
    const low = fails({ GUILD_MONTHLY_CHARS_MAX: '2999' });
    expect(low).toMatchObject({
      variables: ['GUILD_MONTHLY_CHARS_MAX'],
      message: expect.stringContaining('at least GUILD_MONTHLY_CHARS (3000)'),
    });
    expect(fails({ USER_MONTHLY_CHARS: '2000', USER_MONTHLY_CHARS_MAX: '1500' }).variables).toEqual(['USER_MONTHLY_CHARS_MAX']);
    expect(fails({ ROLE_MONTHLY_CHARS_MAX: '999' }).variables).toEqual(['ROLE_MONTHLY_CHARS_MAX']);
    // A server default below the member default leaves the unset role ceiling at the member one: no refusal.
    const lowServer = loadConfig({ ...REQUIRED, GUILD_MONTHLY_CHARS: '500' }).limits.ceilings;
    expect(lowServer).toEqual({ guildMonthlyLimit: 500, userMonthlyLimit: 1_000, roleMonthlyLimit: 1_000 });
    expect(fails({ GUILD_MONTHLY_CHARS_MAX: 'lots' }).variables).toEqual(['GUILD_MONTHLY_CHARS_MAX']);
  });
});

describe('the web dashboard variables', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig({ ...REQUIRED, ...env });
    } catch (error) {
      return (error as Error).message;
    }
    return undefined;
  };

  it('GIVEN no DASHBOARD_PORT THEN off; GIVEN one THEN on 127.0.0.1 with the client secret and the public URL', () => {
    expect(loadConfig(REQUIRED).dashboard).toBeUndefined();
    const secret = 'client-secret-abcdefgh';
    expect(
      loadConfig({ ...REQUIRED, DASHBOARD_PORT: '8080', DISCORD_CLIENT_SECRET: secret, DASHBOARD_URL: 'https://bot.example.com/' })
        .dashboard,
    ).toEqual({
      port: 8080,
      host: '127.0.0.1',
      publicUrl: 'https://bot.example.com',
      clientId: undefined,
      clientSecret: secret,
      peers: [],
    });
    const peers = 'DASHBOARD_PEERS';
    expect(
      loadConfig({
        ...REQUIRED,
        DASHBOARD_PORT: '0',
        DISCORD_CLIENT_SECRET: secret,
        [peers]: '0-1,3=https://a.example.com/  4=https://b.example.com',
      }).dashboard?.peers,
    ).toEqual([
      { shards: [0, 1, 3], url: 'https://a.example.com' },
      { shards: [4], url: 'https://b.example.com' },
    ]);
  });

  it('GIVEN a port without its secret, an address without a port, or plain http THEN start-up refuses, naming it', () => {
    expect(refusal({ DASHBOARD_PORT: '8080' })).toContain('DISCORD_CLIENT_SECRET: is required with DASHBOARD_PORT');
    expect(refusal({ DASHBOARD_URL: 'https://bot.example.com' })).toContain('DASHBOARD_URL: needs DASHBOARD_PORT');
    const secret = 'client-secret-abcdefgh';
    const http = refusal({ DASHBOARD_PORT: '8080', DISCORD_CLIENT_SECRET: secret, DASHBOARD_URL: 'http://bot.example.com' });
    expect(http).toContain('DASHBOARD_URL: must be https');
    expect(refusal({ DASHBOARD_PORT: 'web', DISCORD_CLIENT_SECRET: secret })).toContain('DASHBOARD_PORT: must be a port number');
    expect(refusal({ DASHBOARD_PORT: '0', DISCORD_CLIENT_SECRET: secret, DASHBOARD_PEERS: 'https://b.example.com' })).toContain(
      'DASHBOARD_PEERS: must be entries like 4-7=https://b.example.com',
    );
    expect(refusal({ DASHBOARD_PORT: '0', DISCORD_CLIENT_SECRET: secret, DASHBOARD_PEERS: '4=http://b.example.com' })).toContain(
      'DASHBOARD_PEERS',
    );
  });
});
