import { describe, expect, it } from 'vitest';
import { normaliseMessage, type NormaliseOptions, type PlainMessage } from '../../src/speech/text/text.ts';
import { type ReadLang } from '../../src/speech/text/words.ts';

// Images and polls as a screen reader reads them: an attachment's alt text (Discord's attachment
// `description`) instead of its kind alone, and a poll's result when it ends (Discord's poll result
// message, type 46, whose `poll_result` embed carries the question, the winner and the votes).
// Ids and names are made up.
function msg(extra: Partial<PlainMessage> = {}): PlainMessage {
  return {
    content: '',
    authorId: '100',
    authorName: 'たろう',
    users: { '200': 'はなこ' },
    roles: {},
    channels: {},
    attachments: [],
    stickers: [],
    ...extra,
  };
}
const read = (lang: ReadLang, extra: Partial<PlainMessage>, opts: Partial<NormaliseOptions> = {}) =>
  normaliseMessage(msg(extra), { lang, maxLength: 200, ...opts });

const image = (description?: string) => ({ name: 'IMG_0001.jpg', contentType: 'image/jpeg', ...(description ? { description } : {}) });

describe('alt text', () => {
  it.each([
    ['ja', [image('夕焼けの海')], '画像: 夕焼けの海'],
    ['en', [image('sunset over the sea')], 'image: sunset over the sea'],
    ['ja', [image('夕焼けの海'), image(), image()], '画像: 夕焼けの海、画像2枚'],
    ['en', [image('sunset over the sea'), image(), image()], 'image: sunset over the sea, 2 images'],
    ['ja', [image(), image('猫'), image('犬')], '画像、画像: 猫、画像: 犬'],
    ['en', [{ name: 'clip.mp4', contentType: 'video/mp4', description: 'a cat jumping' }, image()], 'video: a cat jumping, an image'],
    ['ja', [{ name: 'song.mp3', description: '自作の曲' }, { name: 'report.pdf' }], '音声ファイル: 自作の曲、添付ファイル'],
  ] as const)('GIVEN attachments (%s) %j THEN it reads %j', (lang, attachments, expected) => {
    expect(read(lang, { attachments: [...attachments] })).toBe(expected);
  });

  it('GIVEN text, an image with alt text and an embed of the same kind THEN the text, the described image, then the rest counted', () => {
    expect(read('ja', { content: '見て', attachments: [image('富士山'), image()], embeds: ['image'] })).toBe('見て、画像: 富士山、画像2枚');
  });

  it('GIVEN alt text with a URL, a mention, an id, markup and a spoiler THEN it is read as message text is: none of them aloud', () => {
    const out = read('ja', { attachments: [image('**<@200>** と <@999999999999999999> https://example.com/a?x=1 ||ネタバレ中身||')] });
    expect(out).toBe('画像: はなこ と ユーザー URL省略 ネタバレ');
    expect(read('en', { attachments: [image('<@&123456789012345678> at <#123456789012345678>')] })).toBe('image: a role at a channel');
  });

  it('GIVEN alt text THEN the dictionary applies to it', () => {
    const out = read('ja', { attachments: [image('GPUの写真')] }, { dictionary: [{ word: 'GPU', reading: 'ジーピーユー' }] });
    expect(out).toBe('画像: ジーピーユーの写真');
  });

  it('GIVEN a long alt text THEN the whole message is cut at the length limit as message text is', () => {
    expect(read('ja', { attachments: [image('あいうえお'.repeat(200))] }, { maxLength: 10 })).toBe('画像: あいうえおあ、以下略');
    expect(read('en', { content: 'look', attachments: [image('a very long description of a photo')] }, { maxLength: 20 })).toBe(
      'look, image: a very, and so on',
    );
  });

  it('GIVEN alt text of only emoji or whitespace THEN the image is read by its kind, as if it had none', () => {
    expect(read('ja', { attachments: [image('🌅🌅'), image('   ')] })).toBe('画像2枚');
    expect(read('ja', { attachments: [image('🍣')] }, { readEmoji: true })).toBe('画像: すし');
  });

  it('GIVEN alt text with a run of one character THEN no character repeats 20+ times', () => {
    expect(read('ja', { attachments: [image('ー'.repeat(40))] })).toBe('画像: ーーーー');
  });
});

describe('poll results', () => {
  const lunch = (extra: Partial<NonNullable<PlainMessage['pollResult']>> = {}) => ({
    question: '昼ごはんは何にする',
    winner: { text: 'ラーメン', answerId: 1 },
    votes: 3,
    total: 5,
    ...extra,
  });

  it.each([
    ['ja', lunch(), '投票結果、昼ごはんは何にする、1位はラーメン、全5票中3票'],
    ['en', lunch({ question: 'Lunch?', winner: { text: 'Ramen', answerId: 1 } }), 'Poll results: Lunch? Winner: Ramen, 3 of 5 votes'],
    [
      'en',
      lunch({ question: 'Lunch', winner: { text: 'Ramen', answerId: 1 }, votes: 1, total: 1 }),
      'Poll results: Lunch. Winner: Ramen, 1 of 1 vote',
    ],
  ] as const)(
    'GIVEN a poll won by one answer (%s) THEN the question, the winner and its votes of all are read',
    (lang, result, expected) => {
      expect(read(lang, { pollResult: result })).toBe(expected);
    },
  );

  it.each([
    // The full-width "？" is spelt "?" as in message text (NFKC), and is pause enough.
    ['ja', '投票結果、昼ごはんは何にする?2票ずつの同票、全4票'],
    ['en', 'Poll results: 昼ごはんは何にする? A tie at 2 votes each, 4 votes in all'],
  ] as const)('GIVEN a tie (%s) THEN the tie and the votes are read, no winner', (lang, expected) => {
    const { winner: _none, ...tie } = lunch({ question: '昼ごはんは何にする？', votes: 2, total: 4 });
    expect(read(lang, { pollResult: tie })).toBe(expected);
  });

  it.each([
    ['ja', '投票結果、昼ごはんは何にする、投票はありませんでした'],
    ['en', 'Poll results: 昼ごはんは何にする. No votes'],
  ] as const)('GIVEN nobody voted (%s) THEN it says so', (lang, expected) => {
    expect(read(lang, { pollResult: { question: '昼ごはんは何にする', votes: 0, total: 0 } })).toBe(expected);
  });

  it('GIVEN a winning answer of only an emoji THEN it is named by its number', () => {
    expect(read('ja', { pollResult: lunch({ winner: { text: '🍜', answerId: 2 } }) })).toBe(
      '投票結果、昼ごはんは何にする、1位は2番目の選択肢、全5票中3票',
    );
    expect(read('en', { pollResult: lunch({ question: 'Lunch', winner: { text: '', answerId: 2 } }) })).toBe(
      'Poll results: Lunch. Winner: option 2, 3 of 5 votes',
    );
  });

  it('GIVEN a question and an answer with a URL, a mention and markup THEN they are read as message text is', () => {
    const out = read('ja', {
      pollResult: lunch({ question: '**<@200>** の案 https://example.com/menu?id=1', winner: { text: '<@&300> ||秘密||', answerId: 1 } }),
    });
    expect(out).toBe('投票結果、はなこ の案 URL省略、1位はロール ネタバレ、全5票中3票');
  });

  it('GIVEN the dictionary and the length limit THEN they apply to the result as to message text', () => {
    const out = read('ja', { pollResult: lunch() }, { dictionary: [{ word: 'ラーメン', reading: 'らーめん' }], maxLength: 22 });
    expect(out).toBe('投票結果、昼ごはんは何にする、1位はらーめん、以下略');
  });
});
