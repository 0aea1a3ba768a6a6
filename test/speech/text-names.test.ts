import { describe, expect, it } from 'vitest';
import { joinAnnouncement, NameReader, speakableName } from '../../src/speech/names.ts';
import { FakeClock } from '../support/clock.ts';

describe('NameReader.prefix', () => {
  it('GIVEN name reading on THEN the first message is prefixed in the reading language', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    expect(reader.prefix('g1', 'u1', 'たろう', 'ja', true)).toBe('たろう、');
    expect(reader.prefix('g2', 'u1', 'Taro', 'en', true)).toBe('Taro said, ');
  });

  it('GIVEN the same author again within the window THEN the name is not repeated; after it, it is', async () => {
    const clock = new FakeClock();
    const reader = new NameReader({ clock, repeatWindowMs: 30_000 });
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('たろう、');
    await clock.advance(29_999);
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('');
    await clock.advance(29_999); // the window slides with each message: still one monologue
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('');
    await clock.advance(30_000);
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('たろう、');
  });

  it('GIVEN another author speaks in between THEN the first author is named again', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('たろう、');
    expect(reader.prefix('g', 'u2', 'はなこ', 'ja', true)).toBe('はなこ、');
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('たろう、');
  });

  it('GIVEN two guilds THEN each keeps its own last speaker', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    expect(reader.prefix('g1', 'u1', 'Taro', 'en', true)).toBe('Taro said, ');
    expect(reader.prefix('g2', 'u2', 'Hana', 'en', true)).toBe('Hana said, ');
    expect(reader.prefix('g1', 'u1', 'Taro', 'en', true)).toBe('');
  });

  it('GIVEN name reading disabled THEN there is no prefix', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', false)).toBe('');
  });

  it('GIVEN forget(guild) THEN the next message is named again', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    reader.prefix('g', 'u1', 'たろう', 'ja', true);
    reader.forget('g');
    expect(reader.prefix('g', 'u1', 'たろう', 'ja', true)).toBe('たろう、');
  });

  it('GIVEN a dictionary THEN it applies to the name, longest match first', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    const dict = [
      { word: 'Neko', reading: 'ねこ' },
      { word: 'NekoChan', reading: 'ねこちゃん' },
    ];
    expect(reader.prefix('g', 'u1', 'nekochan', 'ja', true, dict)).toBe('ねこちゃん、');
  });

  it('GIVEN a long name THEN it is capped at 20 characters', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    expect(reader.prefix('g', 'u1', 'あいうえおかきくけこさしすせそたちつてとなにぬねの', 'ja', true)).toBe(
      'あいうえおかきくけこさしすせそたちつてと、',
    );
  });

  it('GIVEN a name of only emoji THEN no prefix is read (rather than an empty "said")', () => {
    const reader = new NameReader({ clock: new FakeClock() });
    expect(reader.prefix('g', 'u1', '🌸🌸', 'en', true)).toBe('');
  });
});

describe('speakableName', () => {
  it.each([
    ['たろう🍣', 'ja', 'たろう'],
    ['__Taro__', 'en', 'Taro'],
    ['ｶﾀｶﾅ', 'ja', 'カタカナ'],
    ['@everyone', 'en', 'everyone'],
    ['@@here', 'en', 'here'],
    ['<@123>', 'en', '@123'],
    ['ーーーーーーーーーーーーーーーーーーーーーーー太郎', 'ja', 'ーーーー太郎'],
  ] as const)('GIVEN %j (%s) THEN it reads %j', (name, lang, expected) => {
    expect(speakableName(name, lang)).toBe(expected);
  });

  it('GIVEN an unvalidated reading with a URL or mention THEN neither comes through', () => {
    const out = speakableName('x', 'en', [{ word: 'x', reading: 'https://evil.example <@1>' }]);
    expect(out).not.toMatch(/https?:|<@/);
  });
});

describe('joinAnnouncement', () => {
  it.each([
    ['たろう', 'ja', 'join', 'たろうさんが入室しました。'],
    ['たろう', 'ja', 'leave', 'たろうさんが退出しました。'],
    ['Taro', 'en', 'join', 'Taro joined.'],
    ['Taro', 'en', 'leave', 'Taro left.'],
    ['🌸', 'ja', 'join', '誰かが入室しました。'],
    ['🌸', 'en', 'leave', 'Someone left.'],
  ] as const)('GIVEN %j (%s, %s) THEN it reads %j', (name, lang, kind, expected) => {
    expect(joinAnnouncement(name, lang, kind)).toBe(expected);
  });

  it('GIVEN a dictionary THEN the name in the announcement is read with it', () => {
    expect(joinAnnouncement('kana', 'ja', 'join', [{ word: 'kana', reading: 'かな' }])).toBe('かなさんが入室しました。');
  });
});
