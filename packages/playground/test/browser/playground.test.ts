/**
 * Issue 16, as a person would use it: `npm run playground` (the README's command, as a child
 * process in a process group of its own, like a terminal runs it), then the printed URL in a real
 * browser (Debian's Chromium through playwright-core). Write a message as a member and hear it:
 * the utterance is listed with its text and its audio arrives in the page; run `/config voice` as a
 * member who is no admin and see the refusal in the Discord language chosen; play and download the
 * bot's MP3; see the service side. Nothing of it listens beyond 127.0.0.1. Ctrl-C stops it all.
 * Runs with `npm run test:browser` (its own vitest config: it takes about half a minute).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAYGROUND_IDS } from '../../src/world.ts';
import { launchChromium } from '../../../../test/support/browser.ts';
import { listeningSockets, processTree } from '../../../../test/support/sockets.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const SCREENSHOT = join(ROOT, 'test-results', 'playground.png');

let playground: ChildProcess;
let output = '';
let url: string;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;

beforeAll(async () => {
  // A process group of its own, as in a terminal: Ctrl-C (SIGINT) then goes to npm, the playground and the bot.
  playground = spawn('npm', ['run', 'playground'], { cwd: ROOT, env: { ...process.env, PLAYGROUND_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  playground.stdout!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  playground.stderr!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 120 s:\n${output}`)), 120_000);
    const check = () => {
      const m = /Open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    };
    playground.stdout!.on('data', check);
    playground.once('exit', (code) => reject(new Error(`npm run playground exited with ${code}:\n${output}`)));
  });
  browser = await launchChromium();
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(url);
  await page.locator('#connection.ok').waitFor();
  await page.locator('#bot-status.ok').waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (playground && playground.exitCode === null) {
    try {
      process.kill(-playground.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** What the page exposes for a test (public/app.js): what it heard, and its audio clock. */
interface PageGlobals {
  playground: {
    heard: { loudFrames: number; sumSquares: number; loudSamples: number };
    audioContext: { state: string; currentTime: number } | null;
  };
}

const member = (id: string) => page.selectOption('#as-member', id);

async function runCommand(name: string, sub?: string, values: Record<string, string> = {}): Promise<void> {
  await page.selectOption('#command', name);
  if (sub) await page.selectOption('#subcommand', sub);
  for (const [option, value] of Object.entries(values)) await page.fill(`#opt-${option}`, value);
  await page.click('#run-command');
}

describe('the playground in a browser', () => {
  it('prints one URL, on 127.0.0.1', () => {
    expect(output.match(/https?:\/\/[^\s]+/g)).toEqual([url]);
  });

  it('a message typed as a member is read aloud: the utterance is listed with its text, and its audio arrives in the page', async () => {
    await page.selectOption('#locale', 'ja');
    await member(PLAYGROUND_IDS.alice);
    await page.click('#voice-toggle'); // join the voice channel (and allow sound: a click)
    await page.locator('#voice-channels li', { hasText: 'Alice' }).waitFor();
    await runCommand('join');
    await page.locator('#timeline li.bot', { hasText: '参加しました' }).waitFor({ timeout: 30_000 });

    const text = 'ブラウザから読み上げのテストです';
    await page.fill('#message', text);
    await page.press('#message', 'Enter');
    await page.locator('#timeline li.member', { hasText: text }).waitFor();
    // Listed while it plays, labelled with what the bot says (its name reading first), then done.
    const utterance = page.locator('#utterances li.done', { hasText: text });
    await utterance.waitFor({ timeout: 30_000 });
    expect(await utterance.textContent()).toMatch(/end-to-end encrypted \(DAVE\).*heard by Alice/);

    const heard = await page.evaluate(() => (globalThis as unknown as PageGlobals).playground.heard);
    expect(heard.loudFrames).toBeGreaterThan(25); // more than half a second of sound
    expect(20 * Math.log10(Math.sqrt(heard.sumSquares / heard.loudSamples) / 32768)).toBeGreaterThan(-40);
    // And it is played: the page's audio clock runs.
    const clock = await page.evaluate(() => {
      const ctx = (globalThis as unknown as PageGlobals).playground.audioContext;
      return ctx ? { state: ctx.state, time: ctx.currentTime } : null;
    });
    expect(clock).toMatchObject({ state: 'running' });
    expect(clock!.time).toBeGreaterThan(0.5);
  });

  it('/config voice as a member who is no admin: refused in the chosen language, ephemeral (screenshot: test-results/playground.png)', async () => {
    await member(PLAYGROUND_IDS.taro);
    await runCommand('config', 'voice', { value: 'ja-JP-Wavenet-A' });
    const refusal = page.locator('#timeline li.bot.ephemeral', { hasText: 'このコマンドには「サーバー管理」権限が必要です。' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/ephemeral\s*Only タロー can see this/);

    await page.selectOption('#locale', 'en-US');
    await runCommand('config', 'voice', { value: 'ja-JP-Wavenet-A' });
    await page.locator('#timeline li.bot.ephemeral', { hasText: 'You need the Manage Server permission to use this command.' }).waitFor();
    // The page as a person sees it now: the message read aloud, its utterance, both refusals, the service side.
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    // The admin is not refused.
    await member(PLAYGROUND_IDS.haruka);
    await runCommand('config', 'voice', { value: 'ja-JP-Wavenet-A' });
    await page.locator('#timeline li.bot', { hasText: 'ja-JP-Wavenet-A' }).last().waitFor();
  });

  it("the bot's MP3 attachment plays in the page and downloads as a file", async () => {
    await member(PLAYGROUND_IDS.alice);
    await page.selectOption('#command', 'say');
    await page.fill('#opt-text', 'ファイルでも届きます');
    await page.selectOption('#opt-attach', 'true');
    await page.click('#run-command');
    const reply = page.locator('#timeline li.bot', { has: page.locator('audio') }).last();
    await reply.waitFor({ timeout: 30_000 });
    const played = await reply.locator('audio').evaluate(async (element) => {
      const audio = element as unknown as { muted: boolean; play(): Promise<void>; currentTime: number; duration: number };
      audio.muted = true;
      await audio.play();
      await new Promise((r) => setTimeout(r, 400));
      return { time: audio.currentTime, duration: audio.duration };
    });
    expect(played.duration).toBeGreaterThan(0.5);
    expect(played.time).toBeGreaterThan(0.1);
    const [download] = await Promise.all([page.waitForEvent('download'), reply.locator('a[download]').click()]);
    expect(download.suggestedFilename()).toMatch(/\.mp3$/);
  });

  it('the service side: requests sent, the rate window, characters spent', async () => {
    await expect.poll(() => page.locator('#requests tbody tr', { hasText: 'standard' }).count()).toBeGreaterThan(1);
    expect(await page.locator('#requests tbody').textContent()).toContain('ブラウザから読み上げのテストです');
    expect(await page.locator('#rate').textContent()).toMatch(/standard: [1-9]\d* \/ 30 requests in the last 60 s/);
    expect(await page.locator('#characters').textContent()).toMatch(/Characters spent: [1-9]\d*/);
  });

  it('nothing of it listens beyond 127.0.0.1 (the bot\'s voice socket included)', () => {
    const sockets = listeningSockets(processTree(playground.pid!));
    // The emulator, the local Discord, its voice gateway and the page; the voice UDP socket and the bot's.
    expect(sockets.filter((s) => s.proto.startsWith('tcp')).length).toBeGreaterThanOrEqual(4);
    expect(sockets.filter((s) => s.proto.startsWith('udp')).length).toBeGreaterThanOrEqual(2);
    expect(sockets.filter((s) => s.address !== '127.0.0.1')).toEqual([]);
  });

  it('Ctrl-C stops everything: the bot and the playground exit', async () => {
    const tree = processTree(playground.pid!);
    expect(tree.length).toBeGreaterThanOrEqual(3); // npm (and its shell), the playground, the bot
    process.kill(-playground.pid!, 'SIGINT');
    await expect.poll(() => tree.filter((pid) => alive(pid)), { timeout: 30_000 }).toEqual([]);
    expect(output).toMatch(/SIGINT: stopping/);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
