import { describe, expect, it } from 'vitest';
import { contentEvidence, MessageContentWatch, type MessageShape } from '../../src/discord/diagnosis/message-content.ts';

// Whether message content reaches the bot, told from the messages themselves: Discord blanks what
// the Message Content intent guards, and a member cannot send an empty message.
const plain: MessageShape = {
  byMember: true,
  mentionsBot: false,
  content: '',
  attachments: 0,
  embeds: 0,
  components: 0,
  poll: false,
  stickers: 0,
  snapshots: [],
};

describe('contentEvidence', () => {
  it.each<[string, Partial<MessageShape>, ReturnType<typeof contentEvidence>]>([
    ["GIVEN a member's message with text THEN content arrives", { content: 'こんにちは' }, 'text'],
    ['GIVEN only a file THEN content arrives (files are blanked too without it)', { attachments: 1 }, 'text'],
    ['GIVEN only a poll THEN content arrives', { poll: true }, 'text'],
    ['GIVEN a forward with text THEN content arrives', { snapshots: [{ content: 'fwd', attachments: 0, embeds: 0, stickers: 0 }] }, 'text'],
    ['GIVEN nothing at all THEN it was blanked (a member cannot send that)', {}, 'blanked'],
    [
      'GIVEN a forward with nothing in it THEN it was blanked',
      { snapshots: [{ content: '', attachments: 0, embeds: 0, stickers: 0 }] },
      'blanked',
    ],
    ['GIVEN only a sticker THEN it says nothing', { stickers: 1 }, 'none'],
    [
      'GIVEN a forwarded sticker only THEN it says nothing',
      { snapshots: [{ content: '', attachments: 0, embeds: 0, stickers: 1 }] },
      'none',
    ],
    ['GIVEN a message mentioning the bot THEN it says nothing (Discord sends those whole)', { mentionsBot: true }, 'none'],
    ["GIVEN a bot's, a webhook's or a system message THEN it says nothing (a deferred reply is empty)", { byMember: false }, 'none'],
    ["GIVEN a poll's result with its embed THEN content arrives", { byMember: false, pollResult: true, embeds: 1 }, 'text'],
    [
      "GIVEN a poll's result without its embed THEN it was blanked (Discord always sends the result)",
      { byMember: false, pollResult: true },
      'blanked',
    ],
  ])('%s', (_, shape, expected) => {
    expect(contentEvidence({ ...plain, ...shape })).toBe(expected);
  });
});

describe('MessageContentWatch', () => {
  it('GIVEN no evidence THEN unknown; blanked messages THEN missing since the first, counted; text again THEN arriving', () => {
    const watch = new MessageContentWatch();
    expect(watch.verdict()).toEqual({ state: 'unknown' });
    watch.note('text', 1_000);
    expect(watch.verdict()).toEqual({ state: 'arriving', lastAt: 1_000 });
    watch.note('none', 1_500);
    watch.note('blanked', 2_000);
    watch.note('blanked', 3_000);
    expect(watch.verdict()).toEqual({ state: 'missing', since: 2_000, blanked: 2 });
    watch.note('text', 4_000);
    expect(watch.verdict()).toEqual({ state: 'arriving', lastAt: 4_000 });
  });
});
