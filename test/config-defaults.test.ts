import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Db } from '../src/db/database.ts';
import { CharacterBudget } from '../src/billing/budget.ts';
import { AUDIO_CACHE_DEFAULTS } from '../src/speech/synthesis/cache.ts';

// One default per setting, and it is the documented one (.env.example).
const REQUIRED = { DISCORD_TOKEN: 'aaaa.bbbb.cccc', TTS_TOKEN: 'x'.repeat(64) };

/** `VAR=value` lines of .env.example with the comment block above each. */
function documented(): Array<{ name: string; value: string; comment: string }> {
  const out: Array<{ name: string; value: string; comment: string }> = [];
  let comment: string[] = [];
  for (const line of readFileSync(new URL('../.env.example', import.meta.url), 'utf8').split('\n')) {
    if (line.startsWith('#')) comment.push(line.slice(1).trim());
    else if (/^[A-Z_]+=/.test(line)) {
      const [name, value] = line.split(/=(.*)/s) as [string, string];
      out.push({ name, value: value.trim(), comment: comment.join(' ') });
      comment = [];
    } else comment = [];
  }
  return out;
}

let dir: string;
let db: Db;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'defaults-'));
  db = openDatabase(join(dir, 'bot.db'));
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('defaults', () => {
  it(".env.example states each default in its comment and its sample value, and they are the code's", () => {
    const vars = documented();
    const stated = vars.filter((v) => /Default [^.\s]+\./.test(v.comment));
    expect(stated.map((v) => v.name)).toEqual(
      expect.arrayContaining(['GUILD_MONTHLY_CHARS', 'ACCOUNT_MONTHLY_CHARS', 'USER_MONTHLY_CHARS', 'CACHE_MAX_MB']),
    );
    for (const v of stated) {
      const inComment = /Default ([^.\s]+)\./.exec(v.comment)![1]!;
      if (v.value) expect(v.value, v.name).toBe(inComment);
    }
    // Setting every sample value changes nothing: the samples are the defaults.
    const samples = Object.fromEntries(vars.filter((v) => v.value).map((v) => [v.name, v.value]));
    expect(loadConfig({ ...REQUIRED, ...samples })).toEqual(loadConfig(REQUIRED));
  });

  it('the budget without options applies the documented limits (GUILD_MONTHLY_CHARS 3000)', () => {
    const config = loadConfig(REQUIRED);
    expect(config.limits.guildMonthlyChars).toBe(3_000);
    expect(new CharacterBudget({ db }).limitsFor('g1')).toEqual({
      userMonthlyLimit: config.limits.userMonthlyChars,
      guildMonthlyLimit: config.limits.guildMonthlyChars,
      accountMonthlyLimit: config.limits.accountMonthlyChars,
    });
  });

  it('the audio cache without options is capped at the documented 256 MiB', () => {
    expect(loadConfig(REQUIRED).cacheMaxBytes).toBe(256 * 1024 * 1024);
    expect(AUDIO_CACHE_DEFAULTS.maxBytes).toBe(loadConfig(REQUIRED).cacheMaxBytes);
  });
});
