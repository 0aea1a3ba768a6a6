import { describe, expect, it } from 'vitest';
import { validateCommandList } from '../src/rest/commands.ts';
import { computePings } from '../src/messages.ts';
import { parseBody } from '../src/rest/body.ts';

describe('parseBody (multipart by Response#formData)', () => {
  it('GIVEN a FormData body as fetch serialises it THEN payload_json and binary files come back intact', async () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256)); // includes CR/LF and '-' bytes
    const form = new FormData();
    form.append('files[0]', new Blob([bytes], { type: 'audio/mpeg' }), 'a "quoted".mp3');
    form.append('files[1]', new Blob(['\r\n--not-a-boundary\r\n']), 'b.txt');
    form.append('payload_json', JSON.stringify({ content: 'こんにちは', attachments: [{ id: 0 }, { id: 1 }] }));
    const request = new Request('http://127.0.0.1/', { method: 'POST', body: form });
    const contentType = request.headers.get('content-type') ?? undefined;
    expect(contentType).toMatch(/^multipart\/form-data; boundary=/);
    const result = await parseBody(Buffer.from(await request.arrayBuffer()), contentType);
    if (!result.ok) throw new Error(result.error.body.message);
    expect(result.json).toEqual({ content: 'こんにちは', attachments: [{ id: 0 }, { id: 1 }] });
    expect(result.files.map((f) => [f.field, f.name, f.contentType])).toEqual([
      ['files[0]', 'a "quoted".mp3', 'audio/mpeg'],
      ['files[1]', 'b.txt', 'application/octet-stream'],
    ]);
    expect(result.files[0]?.data.equals(bytes)).toBe(true);
    expect(result.files[1]?.data.toString()).toBe('\r\n--not-a-boundary\r\n');
  });

  it('GIVEN a truncated body THEN it returns an error result', async () => {
    const result = await parseBody(
      Buffer.from('--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nvalue'),
      'multipart/form-data; boundary=b',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toEqual({ status: 400, body: { message: 'Invalid multipart body', code: 50109 } });
  });
});

describe('validateCommandList', () => {
  const ok = { name: 'say', description: 'Read aloud' };
  it.each([
    ['valid list', [ok, { name: '読み上げ', description: '日本語の名前' }, { name: 'Read Aloud', type: 3 }], true],
    ['upper-case chat command name', [{ name: 'Say', description: 'x' }], false],
    ['space in name', [{ name: 'say it', description: 'x' }], false],
    ['33-character name', [{ name: 'a'.repeat(33), description: 'x' }], false],
    ['empty description', [{ name: 'say', description: '' }], false],
    ['101-character description', [{ name: 'say', description: 'x'.repeat(101) }], false],
    ['duplicate names', [ok, ok], false],
    [
      'required option after optional',
      [
        {
          ...ok,
          options: [
            { type: 3, name: 'a', description: 'a' },
            { type: 3, name: 'b', description: 'b', required: true },
          ],
        },
      ],
      false,
    ],
    [
      '26 choices',
      [
        {
          ...ok,
          options: [
            { type: 3, name: 'a', description: 'a', choices: Array.from({ length: 26 }, (_, i) => ({ name: `c${i}`, value: `${i}` })) },
          ],
        },
      ],
      false,
    ],
    ['unknown locale', [{ ...ok, name_localizations: { jp: 'いう' } }], false],
    ['description on a context-menu command', [{ name: 'Read', type: 3, description: 'no' }], false],
  ])('GIVEN %s THEN valid = %s', (_label, body, valid) => {
    expect(validateCommandList(body).ok).toBe(valid);
  });

  it("GIVEN an invalid name THEN the error has Discord's 50035 shape with the field path", () => {
    const result = validateCommandList([ok, { name: 'Bad', description: 'x' }]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.status).toBe(400);
    expect(result.error.body).toMatchObject({
      code: 50035,
      errors: { '1': { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } },
    });
  });
});

describe('computePings', () => {
  const text = 'hi <@100000000000000002> <@&100000000000000011> @everyone';
  it.each([
    [
      'no allowed_mentions (Discord default: everything)',
      undefined,
      { users: ['100000000000000002'], roles: ['100000000000000011'], everyone: true },
    ],
    ['parse: []', { parse: [] }, { users: [], roles: [], everyone: false }],
    ['parse users only', { parse: ['users'] }, { users: ['100000000000000002'], roles: [], everyone: false }],
    ['explicit users list', { users: ['100000000000000002'] }, { users: ['100000000000000002'], roles: [], everyone: false }],
  ])('GIVEN %s THEN the pings are as Discord would send them', (_label, allowed, expected) => {
    expect(computePings(text, allowed, false)).toMatchObject(expected);
  });
});
