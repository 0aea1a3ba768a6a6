import { describe, expect, it } from 'vitest';
import { listReply } from '../../src/discord/interactions/list-reply.ts';

// The one helper every list reply uses: whole when it fits, else what fits plus the whole list as a file.
const lines = Array.from({ length: 30 }, (_, i) => `item-${i}`);

describe('listReply', () => {
  it('GIVEN a list that fits THEN the whole text and no file', () => {
    const r = listReply('en', { text: (list) => `Items:\n${list}`, lines: lines.slice(0, 3), fileName: 'items.txt' });
    expect(r).toEqual({ content: 'Items:\nitem-0\nitem-1\nitem-2', files: [] });
  });

  it('GIVEN a list longer than the message THEN the lines that fit, how many more, and every line in the file', () => {
    const r = listReply('en', { text: (list) => `Items: ${list}`, lines, separator: ', ', fileName: 'items.txt', maxChars: 120 });
    expect(r.content.length).toBeLessThanOrEqual(120);
    expect(r.content).toMatch(/^Items: item-0, item-1, .*\n…and \d+ more: the whole list is in the attached file\.$/);
    const shown = r.content.split('\n')[0]!.replace('Items: ', '').split(', ').length;
    expect(r.content).toContain(`…and ${lines.length - shown} more`);
    expect(r.files.map((f) => f.name)).toEqual(['items.txt']);
    expect(String(r.files[0]!.attachment)).toBe(`${lines.join('\n')}\n`);
  });

  it('GIVEN lines written differently in the file (names instead of mentions) THEN the file has those, in Japanese too', () => {
    const mentions = lines.map((l) => `<#${l}>`);
    const r = listReply('ja', {
      text: (list) => list,
      lines: mentions,
      fileLines: lines.map((l) => `#${l}`),
      fileName: 'c.txt',
      maxChars: 40,
    });
    expect(r.content).toContain('（一覧全体は添付ファイルにあります）');
    expect(String(r.files[0]!.attachment)).toContain('#item-29\n');
  });
});
