/**
 * What the playground's browser tests share: the playground started as a person starts it (`npm
 * run playground`, the README's command, as a child process in a process group of its own, like a
 * terminal runs it) and its printed URL opened in a real browser (Debian's Chromium through
 * playwright-core); and the check that a Japanese page shows none of the page's English texts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../../../test/support/browser.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const SCREENSHOTS = join(ROOT, 'test-results');

export interface OpenPlayground {
  /** `npm run playground`, the leader of its process group. */
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  url: string;
  page: Page;
  /** Closes the browser and kills what is left of the playground. */
  close(): Promise<void>;
}

/** Starts `npm run playground` on a free port, opens its URL, and waits for the page's connection and the bot. */
export async function openPlayground(): Promise<OpenPlayground> {
  let output = '';
  // A process group of its own, as in a terminal: Ctrl-C (SIGINT) then goes to npm, the playground and the bot.
  const child = spawn('npm', ['run', 'playground'], {
    cwd: ROOT,
    env: { ...process.env, PLAYGROUND_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const close = async () => {
    await browser?.close();
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL within 120 s:\n${output}`)), 120_000);
      const check = () => {
        const m = /Open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      };
      child.stdout!.on('data', check);
      child.once('exit', (code) => reject(new Error(`npm run playground exited with ${code}:\n${output}`)));
    });
    browser = await launchChromium();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.goto(url);
    await page.locator('#connection.ok').waitFor();
    await page.locator('#bot-status.ok').waitFor();
    return { child, output: () => output, url, page, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The page's own English texts (public/strings.js) that the page shows: in its visible text, or
 * the names given to its controls. Not the server's names (channels, members: data, the same in
 * every language), messages' own text, the bot's log or the request texts.
 */
export function pageEnglishShown(page: Page): Promise<{ found: string[]; title: string; strings: number }> {
  return page.evaluate(() => {
    type PageState = { guild: { name: string; channels: { name: string }[]; members: { displayName: string; username: string }[] } };
    const { playground } = globalThis as unknown as { playground: { pageText: Record<'en', Record<string, string>>; state: PageState } };
    const { pageText, state } = playground;
    const names = [
      state.guild.name,
      ...state.guild.channels.map((c) => c.name),
      ...state.guild.members.flatMap((m) => [m.displayName, m.username]),
    ];
    const { document } = globalThis as unknown as {
      document: {
        body: { cloneNode(deep: boolean): unknown };
        querySelectorAll(s: string): ArrayLike<{ getAttribute(a: string): string | null }>;
        title: string;
      };
    };
    const shown = document.body.cloneNode(true) as { querySelectorAll(s: string): ArrayLike<{ remove(): void }>; innerText: string };
    for (const node of Array.from(shown.querySelectorAll('.body, #log, #requests tbody, .said'))) node.remove();
    let text = [
      shown.innerText,
      ...Array.from(document.querySelectorAll('[aria-label], [placeholder], [title]')).flatMap((e) =>
        ['aria-label', 'placeholder', 'title'].map((a) => e.getAttribute(a) ?? ''),
      ),
    ].join('\n');
    for (const name of names) text = text.split(name).join(' ');
    const found: string[] = [];
    for (const template of Object.values(pageText.en)) {
      for (const part of template.split(/\{\w+\}/)) {
        const words = part
          .trim()
          .replace(/^[·↪▶🔒(+]+\s*|[)…:]+$/gu, '')
          .trim();
        if (!/[A-Za-z]{2}/.test(words)) continue;
        const escaped = words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        if (new RegExp(`(^|[^A-Za-z])${escaped}($|[^A-Za-z])`).test(text)) found.push(words);
      }
    }
    return { found, title: document.title, strings: Object.keys(pageText.en).length };
  });
}
