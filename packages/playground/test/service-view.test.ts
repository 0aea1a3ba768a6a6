/**
 * What the page shows of the emulator's requests (src/views.ts `serviceView`): each standard
 * request's text, its characters and, when it was not 1, the speed it asked for, so a long message
 * read faster (早口) or speech sped up to keep up can be seen beside its text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { serviceView } from '../src/views.ts';

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ speech: 'tones' });
});
afterAll(() => emulator?.close());

async function speak(text: string, speed: number): Promise<void> {
  const res = await fetch(`${emulator.baseUrl}/text_to_speech_api/`, {
    method: 'POST',
    headers: { token: DEFAULT_TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ text, voice: 'ja-JP-Wavenet-B', speed, pitch: 0 }),
  });
  expect(res.status).toBe(200);
}

describe('the requests the page lists', () => {
  it('GIVEN a request at 1.5x and one at 1 THEN the first shows its speed, the second none', async () => {
    await speak('速く読まれる長い文です', 1.5);
    await speak('ふつうの一言', 1);
    const [normal, fast] = serviceView(emulator).requests.filter((r) => r.target === 'standard');
    expect(fast).toMatchObject({ text: '速く読まれる長い文です', chars: 11, speed: 1.5 });
    expect(normal).toMatchObject({ text: 'ふつうの一言', chars: 6 });
    expect(normal).not.toHaveProperty('speed');
  });
});
