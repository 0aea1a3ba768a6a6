import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadDiscordConfig } from '../src/config.ts';
import { CodedError } from '../src/util/coded-error.ts';

const REQUIRED = { DISCORD_TOKEN: 'aaaa.bbbb.cccc', TTS_TOKEN: 'x'.repeat(64) };

describe('MAX_PENDING_PER_MEMBER counts characters (issue 9 §6)', () => {
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

describe('the Discord variables (issue 9 §4)', () => {
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
