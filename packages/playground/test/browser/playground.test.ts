/**
 * The playground as a person would use it: `npm run playground` (the README's command, as a child
 * process in a process group of its own, like a terminal runs it), then the printed URL in a real
 * browser (Debian's Chromium through playwright-core). Follow the page's steps (buttons) and hear a
 * message; write as in Discord (several lines, a code block, an @-mention picked from the list) and
 * hear it read as the bot reads it; a `/` opens the command picker (never sent as chat); a
 * message's Apps menu fixes a reading through the bot's modal; each command is one entry in the
 * timeline; replies stay in view while a command form is open, and a "new messages" bar says when
 * they arrive while scrolled up; the Japanese page shows none of the page's English texts; on a
 * phone the channels, members and steps are a drawer away (screenshots at desktop and phone
 * widths, in Japanese and English, in test-results/); run `/config voice` as a member who is no
 * admin and see the refusal in the Discord language chosen; play and download the bot's MP3; see
 * the service side. Nothing of it listens beyond 127.0.0.1. Ctrl-C stops it all. Runs with
 * `npm run test:browser` (its own vitest config).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAYGROUND_IDS } from '../../src/world.ts';
import { listeningSockets, processTree } from '../../../../test/support/sockets.ts';
import { openPlayground, pageEnglishShown, SCREENSHOTS, type OpenPlayground } from './open-playground.ts';

let session: OpenPlayground;
let playground: ChildProcess;
let url: string;
let page: Page;

beforeAll(async () => {
  session = await openPlayground();
  ({ child: playground, url, page } = session);
}, 180_000);

afterAll(async () => {
  await session?.close();
});

/** What the page exposes for a test (public/app.js): what it heard, and its audio clock. */
interface PageGlobals {
  playground: {
    heard: { loudFrames: number; sumSquares: number; loudSamples: number };
    audioContext: { state: string; currentTime: number } | null;
    /** Every text of the page's own, by language (public/strings.js). */
    pageText: Record<'en' | 'ja', Record<string, string>>;
    state: { items: Map<string, { type: string; content?: string }> };
  };
}

/** What the bot asked the speech service to say, for the request whose text matches (the page's service panel). */
async function spoken(pattern: RegExp): Promise<string> {
  const request = page.locator('#requests tbody td.text', { hasText: pattern });
  await request
    .first()
    .waitFor({ timeout: 30_000 })
    .catch(async (error: Error) => {
      throw new Error(`${error.message}\nrequested: ${(await page.locator('#requests tbody td.text').allTextContents()).join(' | ')}`);
    });
  return (await request.first().getAttribute('title')) ?? '';
}

/** Whether the bottom of the timeline's last item is in view: inside the timeline's box and the window. */
const lastItemInView = () =>
  page.evaluate(() => {
    type Box = { top: number; bottom: number };
    type List = {
      scrollHeight: number;
      clientHeight: number;
      children: ArrayLike<{ getClientRects(): ArrayLike<unknown>; getBoundingClientRect(): Box }>;
      getBoundingClientRect(): Box;
    };
    const { document, innerHeight } = globalThis as unknown as { document: { querySelector(s: string): List }; innerHeight: number };
    const list = document.querySelector('#timeline');
    // The last entry the reader can see: another channel's, or a command's own line once its reply carries it, is not drawn.
    const last = Array.from(list.children)
      .filter((li) => li.getClientRects().length > 0)
      .at(-1)!
      .getBoundingClientRect();
    const box = list.getBoundingClientRect();
    return {
      inView: last.bottom <= Math.min(box.bottom, innerHeight) + 1 && last.bottom > box.top,
      overflows: list.scrollHeight > list.clientHeight,
    };
  });

const member = (id: string) => page.selectOption('#as-member', id);

async function runCommand(name: string, sub?: string, values: Record<string, string> = {}): Promise<void> {
  await page.selectOption('#command', name);
  if (sub) await page.selectOption('#subcommand', sub);
  for (const [option, value] of Object.entries(values)) await page.fill(`#opt-${option}`, value);
  await page.click('#run-command');
}

describe('the playground in a browser', () => {
  it("prints one URL, on 127.0.0.1; the page links to the bot's web dashboard, on 127.0.0.1 too", async () => {
    expect(session.output().match(/https?:\/\/[^\s]+/g)).toEqual([url]);
    expect(await page.getAttribute('#dashboard-link', 'href')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a message typed as a member is read aloud: the utterance is listed with its text, and its audio arrives in the page', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.selectOption('#locale', 'ja');
    await member(PLAYGROUND_IDS.alice);
    // The page's steps are buttons, and the form opens on /join, the step they name.
    expect(await page.inputValue('#command')).toBe('join');
    await page.click('#step-voice'); // join the voice channel (and allow sound: a click)
    await page.locator('#voice-channels li', { hasText: 'Alice' }).waitFor();
    await page.click('#step-join');
    await page.locator('#timeline li.bot', { hasText: '参加しました' }).waitFor({ timeout: 30_000 });

    const text = 'ブラウザから読み上げのテストです';
    await page.fill('#message', text);
    await page.press('#message', 'Enter');
    await page.locator('#timeline li.member', { hasText: text }).waitFor();
    // Listed while it plays, labelled with what the bot says (its name reading first), then done.
    const utterance = page.locator('#utterances li.done', { hasText: text });
    await utterance.waitFor({ timeout: 30_000 });
    expect(await utterance.textContent()).toMatch(/エンドツーエンド暗号化（DAVE）.*聞いた人: Alice/);

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
    // In silence the level bar is empty (not a full bar).
    await expect.poll(() => page.getAttribute('#level', 'aria-valuenow')).toBe('-60');
    expect(await page.locator('#level span').evaluate((e) => e.getBoundingClientRect().width)).toBe(0);
  });

  it('a message of several lines with a code block (Shift+Enter) is shown as one, and read as the bot reads code blocks', async () => {
    await page.click('#message');
    await page.keyboard.type('コードを貼ります');
    const code = Array.from({ length: 16 }, (_, i) => `console.log(${i});`);
    for (const line of ['```js', ...code, '```', 'どうでしょう']) {
      await page.keyboard.press('Shift+Enter');
      await page.keyboard.insertText(line);
    }
    await page.keyboard.press('Enter');
    const sent = page.locator('#timeline li.member', { has: page.locator('pre.code-block') }).last();
    await sent.waitFor();
    expect(await sent.locator('pre.code-block').textContent()).toBe(code.join('\n'));
    expect(await page.inputValue('#message')).toBe('');
    // The bot says the text around the block and, for the block, only that one was there.
    const said = await spoken(/コードを貼ります/);
    expect(said).toMatch(/コードを貼ります.*コードブロック省略.*どうでしょう/);
    expect(said).not.toContain('console');
  });

  it("an @-mention picked from the list is sent as a mention and read as the member's name", async () => {
    await page.click('#message');
    await page.keyboard.type('こんにちは @タ');
    await page.locator('#mentions li[aria-selected="true"]', { hasText: 'タロー' }).waitFor();
    await page.keyboard.press('Enter'); // picks it, as in Discord
    expect(await page.inputValue('#message')).toBe('こんにちは @タロー ');
    await page.keyboard.type('さん、元気？');
    await page.keyboard.press('Enter');
    await page.locator('#timeline li.member .mention', { hasText: '@タロー' }).waitFor();
    const contents = await page.evaluate(() =>
      [...(globalThis as unknown as PageGlobals).playground.state.items.values()].map((i) => i.content),
    );
    expect(contents).toContain(`こんにちは <@${PLAYGROUND_IDS.taro}> さん、元気？`);
    const said = await spoken(/こんにちは.*元気/);
    expect(said).toMatch(/こんにちは.*タロー.*さん/);
    expect(said).not.toContain('@');
  });

  it('a / typed in the message box opens the command picker; the command picked runs from its form, never sent as chat', async () => {
    const requestsBefore = await page.locator('#requests tbody tr').count();
    const messagesBefore = await page.locator('#timeline li.member').count();
    await page.click('#message');
    await page.keyboard.type('/');
    // Every slash command, as a Japanese client names them; the message command is not among them.
    const picker = page.locator('#mentions li');
    await picker.first().waitFor();
    const listed = await picker.locator('b').allInnerTexts();
    expect(listed).toContain('/参加');
    expect(listed).toContain('/設定 声');
    expect(listed.some((c) => c.includes('読みを修正'))).toBe(false);
    expect(await page.locator('#command option').allInnerTexts()).not.toContain('読みを修正');
    await page.keyboard.type('参');
    await expect.poll(() => page.locator('#mentions li[aria-selected="true"] b').innerText()).toBe('/参加');
    await page.keyboard.press('Enter');
    // Its form takes over: nothing is left in the message box, and Enter runs it.
    expect(await page.inputValue('#command')).toBe('join');
    expect(await page.inputValue('#message')).toBe('');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toBe('run-command');
    await page.keyboard.press('Enter');
    const reply = page.locator('#timeline li.bot .context', { hasText: 'Alice が /参加 を使用しました' }).last();
    await reply.waitFor();
    // A / that names no command is said, and not sent either.
    await page.click('#message');
    await page.keyboard.type('/存在しない');
    await page.keyboard.press('Enter');
    expect(await page.textContent('#message-error')).toContain('/存在しない というコマンドはありません');
    await page.fill('#message', '');
    // Nothing of it reached the chat or the speech service.
    expect(await page.locator('#timeline li.member').count()).toBe(messagesBefore);
    expect(await page.locator('#timeline li.member', { hasText: /^\/|\/参/ }).count()).toBe(0);
    const texts = await page.locator('#requests tbody td.text').evaluateAll((tds) => tds.map((td) => td.getAttribute('title') ?? ''));
    expect(texts.filter((t) => /\/参|\/存在/.test(t))).toEqual([]);
    expect(await page.locator('#requests tbody tr').count()).toBeGreaterThanOrEqual(requestsBefore);
  });

  it("the bot's reply stays in view while a command form with options is open, its chart included", async () => {
    await page.selectOption('#command', 'usage'); // a form with an option: the message list shrinks
    await page.locator('#opt-member').waitFor();
    await page.click('#run-command');
    // The answer comes with /usage's chart, whose height is known only once it has loaded.
    const chart = page.locator('#timeline li.bot img').last();
    await chart.waitFor();
    await expect
      .poll(() => chart.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth))
      .toBe(640);
    await expect.poll(lastItemInView).toEqual({ inView: true, overflows: true }); // overflows: following matters
  });

  it('a reply arriving while the reader is scrolled up: a "new messages" bar, which jumps to the present', async () => {
    // The reader scrolls up (the scroll event handled at once, as a wheel's is before anything else arrives).
    await page.locator('#timeline').evaluate((list) => {
      (list as unknown as { scrollTop: number }).scrollTop = 0;
      list.dispatchEvent(new Event('scroll'));
    });
    await expect.poll(lastItemInView).toEqual({ inView: false, overflows: true });
    expect(await page.locator('#new-messages').isVisible()).toBe(false);
    // Taro writes meanwhile: the bar says so, and the reader is left where they were.
    await page.evaluate(
      async ([userId, channelId]) => {
        await fetch('/api/message', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ userId, channelId, content: 'はい' }),
        });
      },
      [PLAYGROUND_IDS.taro, PLAYGROUND_IDS.text],
    );
    await expect
      .poll(() => page.locator('#new-messages').evaluate((b) => [(b as unknown as { hidden: boolean }).hidden, b.textContent]))
      .toEqual([false, '新しいメッセージが 1 件あります・最新へジャンプ ↓']);
    expect((await lastItemInView()).inView).toBe(false);
    await page.click('#new-messages');
    await expect.poll(lastItemInView).toEqual({ inView: true, overflows: true });
    expect(await page.locator('#timeline li.member').last().textContent()).toContain('はい');
    expect(await page.locator('#new-messages').isVisible()).toBe(false);
  });

  it("Apps > 読みを修正 on a message (its ⋯ or a right click): the bot's modal, the reading saved, the word then read with it", async () => {
    await page.fill('#message', 'GPU を新しくしました');
    await page.press('#message', 'Enter');
    const message = page.locator('#timeline li.member', { hasText: 'GPU を新しくしました' }).last();
    await message.waitFor();
    // Asked for before the fix: her next message is not merged into its request (members speak with different voices of the pool, so more waits in the queue).
    await spoken(/GPU を新しくしました/);
    // A right click opens the message's menu, as Discord's; so does its ⋯ button, shown on hover.
    await message.click({ button: 'right' });
    await page.locator('.menu', { hasText: 'アプリ' }).waitFor();
    await page.keyboard.press('Escape');
    expect(await page.locator('.menu').count()).toBe(0);
    await message.hover();
    await message.locator('button.more').click();
    await page.locator('.menu button', { hasText: '読みを修正' }).click();
    // The bot's modal: its title, a field named after the word, Cancel and Submit.
    const modal = page.locator('#modal[open]');
    await modal.waitFor();
    expect(await modal.locator('h2').textContent()).toBe('読みを修正');
    await modal.getByLabel('GPU').fill('じーぴーゆー');
    await modal.getByRole('button', { name: '送信' }).click();
    await modal.waitFor({ state: 'detached' }).catch(() => undefined);
    await expect.poll(() => page.locator('#modal[open]').count()).toBe(0);
    // Answered privately, headed as the message command Alice used (once: no separate "used" line).
    const saved = page.locator('#timeline li.bot.ephemeral', { hasText: '自分の辞書に登録しました' }).last();
    await saved.waitFor();
    expect(await saved.textContent()).toContain('GPU → じーぴーゆー');
    expect(await saved.locator('.context').first().textContent()).toBe('↪ Alice が 読みを修正 を使用しました');
    expect(await page.locator('#timeline li.command', { hasText: '読みを修正' }).filter({ visible: true }).count()).toBe(0);
    // Her next message with the word is read with her reading.
    await page.fill('#message', 'GPU です');
    await page.press('#message', 'Enter');
    expect(await spoken(/^(Alice、)?(GPU|じーぴーゆー) です$/)).toContain('じーぴーゆー です');
  });

  it("the Japanese page shows none of the page's English texts; on a phone the channels and steps are a drawer away (screenshots)", async () => {
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    // Form errors in Japanese (not the browser's English), the range said once, the admin note.
    await page.selectOption('#command', 'say');
    await page.fill('#opt-text', '');
    await page.fill('#opt-speed', '9');
    await page.click('#run-command');
    expect(await page.textContent('#command-error')).toBe('文章は必須です · 速さ: 4以下にしてください');
    const speedHint = await page.locator('#opt-speed + .hint').textContent();
    expect(speedHint!.match(/0\.3/g)).toHaveLength(1);
    // Too long a message is said, not cut: nothing is sent, nothing lost.
    const before = await page.locator('#timeline li.member').count();
    await page.fill('#message', 'あ'.repeat(2500));
    await page.press('#message', 'Enter');
    expect(await page.textContent('#message-error')).toContain('2500 / 2000');
    expect((await page.inputValue('#message')).length).toBe(2500);
    expect(await page.locator('#timeline li.member').count()).toBe(before);
    await page.fill('#message', '');
    await page.selectOption('#command', 'config'); // an admin command: its note
    await page.locator('#command-admin').waitFor();

    // What a person reads: the visible text, and the names given to controls.
    const english = await pageEnglishShown(page);
    expect(english.strings).toBeGreaterThan(80);
    expect(english.found).toEqual([]);
    expect(english.title).toBe('yomiage プレイグラウンド');
    // Error red and the small badges meet WCAG AA (4.5:1) on what is behind them.
    const contrasts = await page.evaluate(() => {
      type Node = { className: string; textContent: string; parentElement: Node | null };
      const { document, getComputedStyle } = globalThis as unknown as {
        document: { querySelectorAll(s: string): ArrayLike<Node> };
        getComputedStyle(e: Node): { color: string; backgroundColor: string };
      };
      const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
      const lum = ([r, g, b]: number[]) =>
        [r!, g!, b!]
          .map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4))
          .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i]!, 0);
      const behind = (e: Node | null): string => {
        for (let n = e; n; n = n.parentElement) {
          const c = getComputedStyle(n).backgroundColor;
          if (rgb(c)[3] !== 0 && c !== 'transparent') return c;
        }
        return 'rgb(255, 255, 255)';
      };
      return Array.from(document.querySelectorAll('#command-error, .badge')).map((e) => {
        const [a, b] = [lum(rgb(getComputedStyle(e).color)), lum(rgb(behind(e)))];
        return { what: `${e.className} ${e.textContent}`, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
      });
    });
    expect(contrasts.length).toBeGreaterThan(3);
    expect(contrasts.filter((c) => c.ratio < 4.5)).toEqual([]);

    // The service panel too: endpoints and the plan in Japanese, not the emulator's raw names.
    const service = await page.locator('#service-panel').innerText();
    expect(service).not.toMatch(/\b(standard|advanced|poll|free|paid)\b/);
    expect(service).toMatch(/標準音声: 直近60秒のリクエスト \d+ \/ 30/);
    expect(service).toContain('（無料プラン）');

    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-ja-1280.png') });
    // At 600 px the chat is the page's width, not a sliver, and the message box is in it.
    await page.setViewportSize({ width: 600, height: 900 });
    const chat = await page.locator('#chat').boundingBox();
    expect(chat!.width).toBeGreaterThan(560);
    expect((await page.locator('#message').boundingBox())!.width).toBeGreaterThan(400);
    // On a phone the chat fills the screen under the header; the server is a drawer (☰), as in Discord's app.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.locator('#step-voice').isVisible()).toBe(false);
    const phoneChat = (await page.locator('#chat').boundingBox())!;
    expect(phoneChat.y).toBeLessThan(160);
    expect(phoneChat.y + phoneChat.height).toBeLessThanOrEqual(845);
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollHeight)).toBeLessThanOrEqual(844);
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-ja-390.png') });
    await page.getByRole('button', { name: 'チャンネル・メンバー・手順' }).click();
    // The steps, the channels and the members, all within the phone's screen (once the drawer has slid in).
    await expect.poll(async () => (await page.locator('#server').boundingBox())?.x).toBe(0);
    for (const target of ['#step-voice', '#step-join', '#text-channels button', '#members button']) {
      const box = (await page.locator(target).first().boundingBox())!;
      expect(box.x, target).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height, target).toBeLessThanOrEqual(844);
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-ja-390-drawer.png') });
    // Picking a channel closes it; so does a tap beside it.
    await page.locator('#text-channels button', { hasText: 'general' }).click();
    await expect.poll(() => page.locator('#step-voice').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'ボイスと読み上げサービス' }).click();
    await expect
      .poll(async () => Math.round((await page.locator('#side').boundingBox())!.x + (await page.locator('#side').boundingBox())!.width))
      .toBe(390);
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-ja-390-side.png') });
    await page.mouse.click(10, 400);
    await expect.poll(() => page.locator('#voice-toggle').isVisible()).toBe(false);
    // In a wider window /usage's chart is shown at its own size, not shrunk.
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(
      await page
        .locator('#timeline li.bot img')
        .last()
        .evaluate((img) => img.getBoundingClientRect().width),
    ).toBe(640);
  });

  it("each command is one entry: the reply headed with it, a long /ナレーション cut; its grey Cancel's answer is no '/button'", async () => {
    const text = 'これは長いナレーションの原稿です。'.repeat(16);
    await page.selectOption('#command', 'narrate');
    await page.fill('#opt-text', text);
    await page.click('#run-command');
    const question = page.locator('#timeline li.bot', { hasText: 'このナレーションは' }).last();
    await question.waitFor();
    // One entry: the bot's question with the header, not a separate "used … (ja)" line; the text cut short.
    const header = (await question.locator('.context').first().textContent())!;
    expect(header).toBe('↪ Alice が /ナレーション 文章: これは長いナレーションの原稿です。これは長いナ… を使用しました');
    expect(await page.locator('#timeline li.command').filter({ visible: true }).count()).toBe(0);
    expect(await page.locator('#timeline').innerText()).not.toMatch(/\((ja|en-US)\)/);
    // Confirm is blurple, Cancel grey, as the bot asked.
    const colour = (name: string) =>
      question.getByRole('button', { name }).evaluate((b) => (globalThis as any).getComputedStyle(b).backgroundColor);
    expect(await colour('確定')).toBe('rgb(88, 101, 242)');
    expect(await colour('キャンセル')).toBe('rgb(78, 80, 88)');
    await question.getByRole('button', { name: 'キャンセル' }).click();
    await page.locator('#timeline li.bot', { hasText: 'キャンセルしました' }).last().waitFor();
    expect(await page.locator('#timeline').innerText()).not.toContain('/button');
  });

  it('/config voice as a member who is no admin: refused in the chosen language, ephemeral', async () => {
    // A member of the list is a button: chosen by keyboard.
    await page.locator('#members button', { hasText: 'タロー' }).focus();
    await page.keyboard.press('Enter');
    expect(await page.inputValue('#as-member')).toBe(PLAYGROUND_IDS.taro);
    await runCommand('config', 'voice', { value: 'ja-JP-Wavenet-A' });
    const refusal = page.locator('#timeline li.bot.ephemeral', { hasText: 'このコマンドには「サーバー管理」権限が必要です。' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/一時的\s*これはタローだけに表示されています/);

    await page.selectOption('#locale', 'en-US');
    await runCommand('config', 'voice', { value: 'ja-JP-Wavenet-A' });
    await page.locator('#timeline li.bot.ephemeral', { hasText: 'You need the Manage Server permission to use this command.' }).waitFor();
    // The English page at desktop and phone widths.
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-en-1280.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-en-390.png') });
    await page.getByRole('button', { name: 'Channels, members and the steps' }).click();
    await expect.poll(async () => (await page.locator('#server').boundingBox())?.x).toBe(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'playground-en-390-drawer.png') });
    await page.keyboard.press('Escape');
    await page.setViewportSize({ width: 1440, height: 900 });
    // The admin is not refused; /config show then lists the settings, one a line, as Discord shows a list.
    await member(PLAYGROUND_IDS.haruka);
    await runCommand('config', 'voice', { value: 'ja-JP-Wavenet-A' });
    await page.locator('#timeline li.bot', { hasText: 'ja-JP-Wavenet-A' }).last().waitFor();
    await runCommand('config', 'show');
    const shown = page.locator('#timeline li.bot', { hasText: 'Server settings' }).last();
    await shown.waitFor();
    const lines = (await shown.locator('.body').innerText()).split('\n');
    expect(lines[0]).toBe('Server settings');
    expect(lines).toContain('• Voice: ja-JP-Wavenet-A');
    expect(lines.slice(1).every((l) => l.startsWith('• '))).toBe(true);
  });

  it("the bot's MP3 attachment plays in the page and downloads as a file", async () => {
    await member(PLAYGROUND_IDS.alice);
    // What the earlier tests left queued in voice is cleared: the attachment does not wait behind it.
    await runCommand('clear');
    await page
      .locator('#timeline li.bot', { hasText: /Cleared \d+ waiting messages/ })
      .last()
      .waitFor();
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
    // The message box comes before every player in the tab order.
    const tabOrder = await page.evaluate(() => {
      type Node = { compareDocumentPosition(other: Node): number };
      const { document } = globalThis as unknown as {
        document: { querySelector(s: string): Node; querySelectorAll(s: string): ArrayLike<Node> };
      };
      const box = document.querySelector('#message');
      return Array.from(document.querySelectorAll('#timeline audio, #timeline a')).map((a) => (box.compareDocumentPosition(a) & 4) !== 0);
    });
    expect(tabOrder.length).toBeGreaterThan(0);
    expect(tabOrder.every(Boolean)).toBe(true);
  });

  it("two voice channels read at once by the bot's two accounts: the page plays only the channel its member is in", async () => {
    // Taro joins Voice 2 and, in #zatsudan, has the bot join there: Voice is taken, so its second account comes.
    await member(PLAYGROUND_IDS.taro);
    await page.locator('#voice-channels button', { hasText: 'Voice 2' }).click();
    await page.click('#voice-toggle');
    await page.locator('#voice-channels .voice-channel', { hasText: 'Voice 2' }).locator('li', { hasText: 'タロー' }).waitFor();
    await page.locator('#text-channels button', { hasText: 'zatsudan' }).click();
    await runCommand('join');
    await page
      .locator('#timeline li.bot', { hasText: /Joined/ })
      .last()
      .waitFor({ timeout: 30_000 });
    await page.locator('#voice-channels .voice-channel', { hasText: 'Voice 2' }).locator('li', { hasText: 'yomiage-2' }).waitFor();
    const loud = () => page.evaluate(() => (globalThis as unknown as PageGlobals).playground.heard.loudFrames);

    // Alice writes in #general (read in Voice, where Taro is not): listed, heard by Alice, not played here.
    const before = await loud();
    const elsewhere = 'ボイスいちだけの発言です';
    await page.evaluate(
      async ([userId, channelId, content]) => {
        const res = await fetch('/api/message', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ userId, channelId, content }),
        });
        if (!res.ok) throw new Error(await res.text());
      },
      [PLAYGROUND_IDS.alice, PLAYGROUND_IDS.text, elsewhere],
    );
    const theirs = page.locator('#utterances li.done', { hasText: elsewhere });
    await theirs.waitFor({ timeout: 30_000 });
    expect(await theirs.textContent()).toMatch(/🔊 Voice ·.*heard by Alice/);
    expect(await loud()).toBe(before);

    // Taro writes in #zatsudan: read in Voice 2 by the second account, heard by Taro, played here.
    const mine = 'ボイスにだけの発言です';
    await page.fill('#message', mine);
    await page.press('#message', 'Enter');
    const ours = page.locator('#utterances li.done', { hasText: mine });
    await ours.waitFor({ timeout: 30_000 });
    expect(await ours.textContent()).toMatch(/🔊 Voice 2 ·.*heard by タロー/);
    expect(await loud()).toBeGreaterThan(before + 25);
  });

  it('the service side: requests sent, the rate window, characters spent', async () => {
    await expect.poll(() => page.locator('#requests tbody tr', { hasText: 'standard' }).count()).toBeGreaterThan(1);
    expect(await page.locator('#requests tbody').textContent()).toContain('ブラウザから読み上げのテストです');
    expect(await page.locator('#rate').textContent()).toMatch(/standard: [1-9]\d* \/ 30 requests in the last 60 s/);
    expect(await page.locator('#characters').textContent()).toMatch(/Characters spent: [1-9]\d*/);
  });

  it("nothing of it listens beyond 127.0.0.1 (the bot's voice socket included)", () => {
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
    expect(session.output()).toMatch(/SIGINT: stopping/);
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
