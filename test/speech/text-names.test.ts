import { describe, expect, it } from 'vitest';
import { AnnouncementAllowance, announcementOf, joinAnnouncement, NameReader, speakableName } from '../../src/speech/text/names.ts';
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

describe('AnnouncementAllowance', () => {
  const limits = { announcements: { max: 4, windowMs: 600_000 }, names: { max: 3, windowMs: 86_400_000 } } as const;

  it('GIVEN one member joining and leaving THEN at most 4 announcements in any 10 minutes; later ones are spoken again', async () => {
    const clock = new FakeClock();
    const allowance = new AnnouncementAllowance({ now: clock.now, limits });
    const forms = Array.from({ length: 6 }, () => allowance.decide('g', 'u1', 'たろう'));
    expect(forms).toEqual(['named', 'named', 'named', 'named', 'silent', 'silent']);
    // Another member, or the same member in another server, is counted apart.
    expect(allowance.decide('g', 'u2', 'はなこ')).toBe('named');
    expect(allowance.decide('g2', 'u1', 'たろう')).toBe('named');
    await clock.advance(600_000);
    expect(allowance.decide('g', 'u1', 'たろう')).toBe('named');
  });

  it('GIVEN a member renaming between visits THEN a fourth new name in a day is announced unnamed; a name heard before stays named', async () => {
    const clock = new FakeClock();
    const allowance = new AnnouncementAllowance({ now: clock.now, limits });
    const forms: string[] = [];
    for (const name of ['あ', 'い', 'う', 'え', 'あ', 'お']) {
      forms.push(allowance.decide('g', 'u1', name));
      await clock.advance(300_000); // two announcements per 10 minutes: never over the count
    }
    expect(forms).toEqual(['named', 'named', 'named', 'unnamed', 'named', 'unnamed']);
    // A member whose name has nothing speakable is announced unnamed, and counted.
    expect(allowance.decide('g', 'u3', '')).toBe('unnamed');
    await clock.advance(86_400_000);
    expect(allowance.decide('g', 'u1', 'お')).toBe('named');
  });

  it('GIVEN the forms THEN the text: the name, or the one fixed unnamed line (a cached clip after its first time)', () => {
    expect(announcementOf('たろう', 'ja', 'join')).toBe('たろうさんが入室しました。');
    expect(announcementOf('', 'ja', 'leave')).toBe('誰かが退出しました。');
    expect(announcementOf('', 'en', 'join')).toBe('Someone joined.');
  });
});
