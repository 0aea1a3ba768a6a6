import { describe, expect, it } from 'vitest';
import { normaliseMessage, type PlainMessage } from '../../src/speech/text/text.ts';
import { type ReadLang } from '../../src/speech/text/words.ts';

// Ids and names are made up; the shapes follow Discord's message formatting reference
// (discord.com/developers/docs/reference#message-formatting).
function msg(content: string, extra: Partial<PlainMessage> = {}): PlainMessage {
  return {
    content,
    authorId: '100',
    authorName: 'たろう',
    users: { '200': 'はなこ', '201': 'Alice', '202': '🌸🌸' },
    roles: { '300': 'Moderators' },
    channels: { '400': '🎮｜game-chat' },
    attachments: [],
    stickers: [],
    ...extra,
  };
}

const read = (content: string, lang: ReadLang, extra: Partial<PlainMessage> = {}, maxLength = 200) =>
  normaliseMessage(msg(content, extra), { lang, maxLength });

describe('GIVEN an auto-read message with a mention, a URL, a custom emoji, a spoiler and a code block', () => {
  const content = '<@200> これ見て https://example.com/a_b?x=1 <:pepe_laugh:123456789> ||犯人はヤス|| ```js\nconsole.log(1)\n```';

  it('THEN Japanese reads it as natural text', () => {
    expect(read(content, 'ja')).toBe('はなこ これ見て URL省略 pepe laugh ネタバレ コードブロック省略');
  });

  it('THEN English reads it as natural text', () => {
    expect(
      read('<@201> look https://example.com/a_b?x=1 <:pepe_laugh:123456789> ||the butler did it|| ```js\nconsole.log(1)\n```', 'en'),
    ).toBe('Alice look a link pepe laugh a spoiler a code block');
  });

  it('THEN the spoiler content, the code and the address are never read', () => {
    for (const lang of ['ja', 'en'] as const) {
      const out = read(content, lang)!;
      expect(out).not.toContain('ヤス');
      expect(out).not.toContain('console');
      expect(out).not.toContain('example');
      expect(out).not.toContain('<@');
    }
  });
});

describe('mentions', () => {
  it.each([
    ['<@200>さん', 'ja', 'はなこさん'],
    ['<@!201> hi', 'en', 'Alice hi'],
    ['<@100> me', 'en', 'たろう me'], // the author, not in `users`: the caller's author name is used
    ['<@999> 誰', 'ja', 'ユーザー 誰'],
    ['<@999> who', 'en', 'someone who'],
    ['<@202> emoji name', 'en', 'someone emoji name'], // nothing speakable left of the name
    ['<@&300> please', 'en', 'Moderators please'],
    ['<@&999> please', 'en', 'a role please'],
    ['<#400> へ', 'ja', 'game chat へ'],
    ['<#999> へ', 'ja', 'チャンネル へ'],
    ['@everyone 集合', 'ja', 'エブリワン 集合'],
    ['@here come', 'en', 'here come'],
    ['</join:123> で参加', 'ja', 'join で参加'],
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });

  it('GIVEN mention-like text that Discord would not resolve THEN the output still never holds "<@" or a ping', () => {
    for (const content of ['<@abc> x', '\\<@200> x', '<<@>> x', '\\@everyone x', '<@&> x', '<@everyone> x', '@@everyone x', '<<@>>']) {
      for (const lang of ['ja', 'en'] as const) {
        const out = read(content, lang) ?? '';
        expect(out).not.toContain('<@');
        expect(out).not.toMatch(/@everyone|@here/);
      }
    }
  });
});

describe('emoji and timestamps', () => {
  it.each([
    ['<:blob_happy:1234> やった', 'ja', 'blob happy やった'],
    ['<a:party-parrot:1234> yay', 'en', 'party parrot yay'],
    ['おはよう😀', 'ja', 'おはよう'],
    ['ok 👍🏽', 'en', 'ok'], // skin tone
    ['家族👨‍👩‍👧‍👦です', 'ja', '家族です'], // ZWJ sequence
    ['日本🇯🇵', 'ja', '日本'], // flag
    ['❤️ love', 'en', 'love'], // variation selector
    ['1️⃣ first', 'en', 'first'], // keycap
    ['明日 <t:1700000000:R> に', 'ja', '明日 日時 に'],
    ['at <t:1700000000>', 'en', 'at a time'],
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });
});

describe('URLs', () => {
  it.each([
    ['これ https://example.com/path?q=1&r=2#x 見て', 'ja', 'これ URL省略 見て'],
    ['これhttps://example.com見て', 'ja', 'これURL省略'], // Discord links up to the next space
    ['https://ja.wikipedia.org/wiki/日本。すごい', 'ja', 'URL省略。すごい'],
    ['see http://example.com/x.', 'en', 'see a link.'],
    ['quiet <https://example.com/x> link', 'en', 'quiet a link link'],
    ['join https://discord.gg/abcDEF now', 'en', 'join an invite link now'],
    ['参加 discord.gg/abcDEF して', 'ja', '参加 招待リンク して'],
    ['https://discord.com/invite/xyz', 'ja', '招待リンク'],
    ['read [the docs](https://example.com/docs) first', 'en', 'read the docs first'],
    ['[https://evil.example](https://evil.example)', 'en', 'a link'],
    ['visit www.example.com', 'en', 'visit a link'],
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });
});

describe('code', () => {
  it.each([
    ['```\nrm -rf /\n```', 'ja', 'コードブロック省略'],
    ['before ```py\nprint(1)``` after', 'en', 'before a code block after'],
    // Inline code is read as its content: it is usually a short command or word.
    ['`npm install` して', 'ja', 'npm install して'],
    ['type ``a `b` c`` now', 'en', 'type a b c now'],
    ['`__init__` runs', 'en', '__init__ runs'], // code is not markdown
    ['`https://example.com` here', 'en', 'a link here'],
    ['`<@200>`', 'ja', 'はなこ'],
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });
});

describe('spoilers', () => {
  it.each([
    ['||秘密|| です', 'ja', 'ネタバレ です'],
    ['plot: ||he dies||', 'en', 'plot: a spoiler'],
    ['||a ```secret code``` b|| visible', 'en', 'a spoiler visible'],
    ['||line1\nline2||', 'ja', 'ネタバレ'],
  ] as const)('GIVEN %j (%s) THEN it reads %j and never the hidden text', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });
});

describe('markdown decoration', () => {
  it.each([
    ['**太字** __下線__ ~~取り消し~~ *斜体* _斜体_', 'ja', '太字 下線 取り消し 斜体 斜体'],
    ['***bold italic*** and ~~**both**~~', 'en', 'bold italic and both'],
    ['# Title\nbody', 'en', 'Title, body'],
    ['## 見出し', 'ja', '見出し'],
    ['-# small print', 'en', 'small print'],
    ['> quoted\nreply', 'en', 'quoted, reply'],
    ['>>> long quote', 'en', 'long quote'],
    ['- one\n- two\n* three', 'en', 'one, two, three'],
    ['> # quoted heading', 'en', 'quoted heading'],
    ['snake_case_name', 'en', 'snake case name'],
    ['\\*literally\\*', 'en', '*literally*'],
    ['#hashtag stays', 'en', '#hashtag stays'], // not a heading without the space
    ['**<@201>** said hi', 'en', 'Alice said hi'],
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });
});

describe('attachments and stickers', () => {
  it.each([
    [[{ name: 'cat.png', contentType: 'image/png' }], 'ja', '画像'],
    [[{ name: 'a.jpg' }, { name: 'b.webp' }, { name: 'c.gif' }], 'ja', '画像3枚'],
    [[{ name: 'clip.mp4' }], 'ja', '動画'],
    [[{ name: 'song.mp3', contentType: 'audio/mpeg' }], 'en', 'an audio file'],
    [[{ name: 'voice-message.ogg', contentType: 'audio/ogg' }], 'en', 'a voice message'],
    [[{ name: 'report.pdf', contentType: 'application/pdf' }], 'ja', '添付ファイル'],
    [[{ name: 'x', contentType: 'image/jpeg' }, { name: 'y', contentType: 'image/jpeg' }, { name: 'z.zip' }], 'en', '2 images, a file'],
  ] as const)('GIVEN attachments %j (%s) THEN it reads %j', (attachments, lang, expected) => {
    expect(read('', lang, { attachments: [...attachments] })).toBe(expected);
  });

  it('GIVEN text with an image THEN the kind follows the text after a pause', () => {
    expect(read('見て', 'ja', { attachments: [{ name: 'IMG_1234.JPG' }] })).toBe('見て、画像');
    expect(read('look', 'en', { attachments: [{ name: 'IMG_1234.JPG' }] })).toBe('look, an image');
  });

  it.each([
    [[{ name: 'Wave' }], 'ja', 'スタンプ「Wave」'],
    [[{ name: 'Hello 👋' }], 'en', 'a sticker, Hello'],
    [[{ name: '👋' }], 'en', 'a sticker'],
  ] as const)('GIVEN stickers %j (%s) THEN it reads %j', (stickers, lang, expected) => {
    expect(read('', lang, { stickers: [...stickers] })).toBe(expected);
  });
});

describe('polls and embeds', () => {
  it.each([
    ['ja', '投票、昼は何にする、選択肢、ラーメン、URL省略'],
    ['en', 'Poll: 昼は何にする. Options: ラーメン, a link'],
  ] as const)('GIVEN a poll (%s) THEN its question and options are read, links as words', (lang, expected) => {
    expect(read('', lang, { poll: { question: '昼は**何に**する', answers: ['ラーメン', 'https://example.com/menu'] } })).toBe(expected);
  });

  it('GIVEN embeds by kind THEN they are counted with attachments of the same kind', () => {
    expect(read('', 'ja', { attachments: [{ name: 'a.png' }], embeds: ['image', 'embed'] })).toBe('画像2枚、埋め込み');
    expect(read('', 'en', { embeds: ['video', 'embed', 'embed'] })).toBe('a video, 2 embeds');
  });
});

describe('newlines', () => {
  it.each([
    ['おはよう\nみんな', 'ja', 'おはよう、みんな'],
    ['おはよう。\nみんな', 'ja', 'おはよう。みんな'],
    ['a\n\n\nb', 'en', 'a, b'],
    ['hello!\nworld', 'en', 'hello! world'],
    ['line\r\nnext', 'en', 'line, next'],
    ['😀\ntext\n😀', 'en', 'text'], // an emoji-only line leaves no stray pause
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });
});

describe('repeated characters', () => {
  it.each([
    ['すごーーーーーーーい', 'ja', 'すごーーーーい'],
    ['noooooooooo', 'en', 'noooo'],
    ['!!!!!!!!!! 最高', 'ja', '!!!! 最高'],
    ['wwwwww', 'ja', 'ワラ'],
    ['それなｗｗｗｗ', 'ja', 'それなワラ'],
    ['草w', 'ja', '草ワラ'],
    ['日本W杯', 'ja', '日本W杯'], // World Cup, not laughter
    ['それなw。', 'ja', 'それなワラ。'],
    ['ｗｗｗ面白い', 'ja', 'ワラ面白い'],
    ['wwwwww', 'en', 'wwww'], // no laughter rule in English
    ['www.example.com ok', 'ja', 'URL省略 ok'], // a URL, not laughter
    ['1000000円', 'ja', '1000000円'], // numbers keep their value
  ] as const)('GIVEN %j (%s) THEN it reads %j', (content, lang, expected) => {
    expect(read(content, lang)).toBe(expected);
  });

  it('GIVEN any long run, in content, names or the dictionary THEN no character repeats 20+ times', () => {
    const long = 'あ'.repeat(50) + '0'.repeat(50) + '😀'.repeat(30) + '!'.repeat(40);
    const out = normaliseMessage(msg(`${long} <@203>`, { users: { '203': 'ー'.repeat(40) } }), {
      lang: 'ja',
      maxLength: 1000,
      dictionary: [{ word: 'x', reading: 'ん'.repeat(30) }],
    });
    expect(out).not.toBeNull();
    expect(out).not.toMatch(/(.)\1{19}/su);
    expect(normaliseMessage(msg('x x'), { lang: 'en', maxLength: 1000, dictionary: [{ word: 'x', reading: 'z'.repeat(30) }] })).toBe(
      'zzzz zzzz',
    );
  });
});

describe('nothing speakable', () => {
  it.each(['', '   ', '\n\n', '😀😀😀', '👍🏻🇯🇵👨‍👩‍👧', '!!!???', '。。。', '...', '**__~~~~__**', '|||'])(
    'GIVEN %j THEN it is null in both languages',
    (content) => {
      expect(read(content, 'ja')).toBeNull();
      expect(read(content, 'en')).toBeNull();
    },
  );

  it('GIVEN only an emoji but an attachment THEN the attachment is read', () => {
    expect(read('😀', 'en', { attachments: [{ name: 'a.png' }] })).toBe('an image');
  });
});

describe('the length cap', () => {
  it('GIVEN a Japanese text longer than maxLength THEN it is cut there and "以下略" appended', () => {
    const out = read('あいうえおかきくけこ'.repeat(10), 'ja', {}, 15);
    expect(out).toBe('あいうえおかきくけこあいうえお、以下略');
  });

  it('GIVEN an English text longer than maxLength THEN "and so on" is appended', () => {
    expect(read('one two three four five six', 'en', {}, 13)).toBe('one two three, and so on');
  });

  it('GIVEN a text exactly maxLength long THEN nothing is appended', () => {
    expect(read('あいうえお', 'ja', {}, 5)).toBe('あいうえお');
  });

  it('GIVEN characters outside the BMP at the cut THEN they count as one and no surrogate pair is split', () => {
    const out = read('𠮷'.repeat(3) + '野家'.repeat(10), 'ja', {}, 4)!;
    expect(out).toBe('𠮷𠮷𠮷野、以下略');
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('GIVEN the dictionary lengthens the text THEN the cap applies after it', () => {
    const out = normaliseMessage(msg('ab'), { lang: 'en', maxLength: 5, dictionary: [{ word: 'ab', reading: 'alpha bravo' }] });
    expect(out).toBe('alpha, and so on');
  });
});

describe('the dictionary inside normalisation', () => {
  it('GIVEN entries THEN they apply after markup is resolved, so mentioned names are read too', () => {
    const out = normaliseMessage(msg('<@201> uses **Discord**'), {
      lang: 'ja',
      maxLength: 100,
      dictionary: [
        { word: 'alice', reading: 'アリス' },
        { word: 'discord', reading: 'ディスコード' },
      ],
    });
    expect(out).toBe('アリス uses ディスコード');
  });

  it('GIVEN a full-width spelling THEN it matches the (NFKC) dictionary word', () => {
    const out = normaliseMessage(msg('ＶＣ来て'), { lang: 'ja', maxLength: 100, dictionary: [{ word: 'VC', reading: 'ブイシー' }] });
    expect(out).toBe('ブイシー来て');
  });

  it('GIVEN an emoji with a reading THEN it is read instead of dropped', () => {
    const out = normaliseMessage(msg('🍣食べたい'), { lang: 'ja', maxLength: 100, dictionary: [{ word: '🍣', reading: 'すし' }] });
    expect(out).toBe('すし食べたい');
  });

  it('GIVEN an unvalidated reading with a URL or a mention THEN the output still holds neither', () => {
    const out = normaliseMessage(msg('a b c'), {
      lang: 'en',
      maxLength: 100,
      dictionary: [
        { word: 'a', reading: 'https://evil.example/x' },
        { word: 'b', reading: '<@123>' },
        { word: 'c', reading: '@everyone' },
      ],
    })!;
    expect(out).not.toMatch(/https?:\/\/|<@|@everyone/);
  });
});

describe('terminal escape sequences', () => {
  it('GIVEN colour codes pasted from a terminal THEN they are removed whole, never read as "[31m"', () => {
    expect(read('\x1b[31mエラー\x1b[0mが出ました', 'ja')).toBe('エラーが出ました');
    expect(read('\x1b[1;32mPASS\x1b[m all tests', 'en')).toBe('PASS all tests');
    expect(read('\x9b33mwarn\x9b0m', 'en')).toBe('warn');
  });

  it('GIVEN a title-setting OSC string or a two-byte escape THEN nothing of it is read', () => {
    expect(read('\x1b]0;my terminal\x07こんにちは', 'ja')).toBe('こんにちは');
    expect(read('\x1b]8;;https://example.com\x1b\\リンク\x1b]8;;\x1b\\', 'ja')).toBe('リンク');
    expect(read('a\x1bMb', 'en')).toBe('ab');
  });

  it('GIVEN a name with colour codes THEN the name is read without them', () => {
    expect(read('<@200>', 'ja', { users: { '200': '\x1b[35mはなこ\x1b[0m' } })).toBe('はなこ');
  });
});
