import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pluginPublish, pluginTokenCheck } from './official-client.ts';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--experimental-strip-types', '--no-warnings', CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  /** Resolves with stdout once it matches `re`, or rejects if the process exits first. */
  const waitFor = (re: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (m) {
          child.stdout.off('data', check);
          resolve(m);
        }
      };
      child.stdout.on('data', check);
      check();
      void exited.then(() => reject(new Error(`exited: ${err}`)));
    });
  return { child, exited, waitFor, output: () => ({ out, err }) };
}

describe('npm run emulator (cli.ts)', () => {
  it('prints the base URL, the test token and a curl example that works; stops cleanly on SIGTERM', async () => {
    const token = 'c'.repeat(64);
    const cli = start(['--port', '0', '--control', '--plan', 'paid', '--token', token]);
    try {
      const [, baseUrl] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)\n[\s\S]*curl .*\n/);
      const { out } = cli.output();
      expect(out).toContain(token);
      expect(out).toContain(`${baseUrl}/text_to_speech_api/`);
      // Replay the printed curl example with fetch.
      const body = /-d '(.*)'/.exec(out)![1]!;
      const res = await fetch(`${baseUrl}/text_to_speech_api/`, {
        method: 'POST',
        headers: { token, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(200);
      const { url } = (await res.json()) as { url: string };
      expect((await fetch(url)).headers.get('content-type')).toBe('audio/mpeg');
      expect((await fetch(`${baseUrl}/__emulator/stats`)).status).toBe(200);
    } finally {
      cli.child.kill('SIGTERM');
    }
    const [code] = await cli.exited;
    expect(code).toBe(0);
  });

  it('answers the service\'s official client: HTTP/1.0, /ja/ path, content-Type with a semicolon, string numbers, "Hi"', async () => {
    const token = 'd'.repeat(64);
    const cli = start(['--port', '0', '--token', token]);
    try {
      const [, baseUrl] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)\n/);
      const settings = { pitch: '0', speed: '1.2', voice: 'ja-JP-Wavenet-B' };
      const check = await pluginTokenCheck(baseUrl!, token, settings);
      expect(check.status).toBe(200);
      expect(check.json.text).toBe('Hi');
      expect((await pluginTokenCheck(baseUrl!, 'w'.repeat(64), settings)).status).toBe(400);
      const published = await pluginPublish(baseUrl!, token, '<p>読み上げのテスト。</p>\n<p>二行目</p>', settings);
      expect(published.status).toBe(200);
      expect(published.json.text).toBe('読み上げのテスト。二行目');
      expect((await fetch(published.json.url)).headers.get('content-type')).toBe('audio/mpeg');
    } finally {
      cli.child.kill('SIGTERM');
    }
    const [code] = await cli.exited;
    expect(code).toBe(0);
  });

  it('refuses a bad setting with a message naming the variable', async () => {
    const cli = start(['--port', '0'], { EMULATOR_PLAN: 'gold' });
    const [code] = await cli.exited;
    expect(code).toBe(2);
    expect(cli.output().err).toMatch(/EMULATOR_PLAN/);
  });
});
