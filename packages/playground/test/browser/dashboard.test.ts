/**
 * The web dashboard as people use it: the bot started as `npm start` does (a child process, with
 * DASHBOARD_PORT) against the local Discord and the TTS emulator, and the dashboard in headless
 * Chromium. An admin signs in through the local Discord's OAuth2 consent page, changes the
 * server's voice and adds three dictionary entries; a chat message is then read with them (the
 * emulator's request log shows the voice and the readings) and the audit log lists each change.
 * A member who is no admin sees only their own settings, and the API refuses them the server's;
 * a forged or missing CSRF token changes nothing; sign-out ends the session. Screenshots in
 * Japanese and English at desktop and phone width go to test-results/ (the paths are printed).
 * Runs with `npm run test:browser`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../../../../test/support/child-bot.ts';
import { launchChromium } from '../../../../test/support/browser.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const SCREENSHOTS = join(ROOT, 'test-results');
const guildId = DEFAULT_IDS.guild;
const VOICE = 'en-US-Wavenet-C';
const READ_AS = 'えーびーしー と えっくすわいぜっと と じーぴーゆー';

let emulator: Emulator;
let discord: FakeDiscord;
let bot: ChildBot;
let dataDir: string;
let url: string;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let page: Page;

beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator({ control: true }), startFakeDiscord()]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-dashboard-'));
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    env: { DASHBOARD_PORT: '0', DISCORD_CLIENT_SECRET: discord.bots[0]!.clientSecret },
  });
  url = String((await bot.waitForLog((l) => l.msg === 'dashboard listening')).url);
  discord.bots[0]!.redirectUris.push(`${url}/auth/callback`);
  browser = await launchChromium();
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Signs in from the dashboard's button through the local Discord's consent page as `userId`. */
async function signIn(userId: string): Promise<void> {
  await page.goto(url);
  await page.locator('#signin').click();
  await page.locator('#user').selectOption(userId);
  await page.locator('button[value="authorize"]').click();
  await page.locator('.server').first().waitFor();
}

/** The page's own fetch of the API (the session cookie goes along), with the CSRF token given. */
function pageApi(method: string, path: string, csrf: string | null, body?: unknown): Promise<{ status: number; body: any }> {
  return page.evaluate(
    async ([method, path, csrf, body]) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (csrf !== null) headers['x-csrf-token'] = csrf;
      const res = await fetch(`/api${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: await res.json() };
    },
    [method, path, csrf, body] as const,
  );
}

const POLL = { timeout: 15_000 };
/** Waits until the element's text is `text` (or contains it). */
const text = (selector: string) =>
  expect.poll(
    () =>
      page
        .locator(selector)
        .first()
        .innerText()
        .catch(() => ''),
    POLL,
  );
const count = (selector: string) => expect.poll(() => page.locator(selector).count(), POLL);

describe('the web dashboard in a browser', () => {
  it('an admin signs in, sets the voice, adds three entries; the next chat message is read with them; the audit log shows it', async () => {
    await signIn(DEFAULT_IDS.bob);
    await text('.server').toContain('Admin');
    await page.locator('.server').first().click();
    await page.getByLabel('Voice', { exact: true }).fill(VOICE);
    await page.getByRole('button', { name: 'Save' }).first().click();
    await text('#status').toBe('Saved.');

    await page.getByRole('link', { name: 'Dictionary' }).click();
    for (const [word, reading] of [
      ['ABC', 'えーびーしー'],
      ['XYZ', 'えっくすわいぜっと'],
      ['GPU', 'じーぴーゆー'],
    ] as const) {
      await page.getByLabel('Word', { exact: true }).fill(word);
      await page.getByLabel('Reading', { exact: true }).fill(reading);
      await page.getByRole('button', { name: 'Add' }).click();
      await text('#status').toBe(`Added: ${word}`);
    }
    await count('table tbody tr').toBe(3);

    // Auto-read posts MP3s in #general while the bot is in no voice channel.
    await page.getByRole('link', { name: 'Server settings' }).click();
    await page.getByLabel('Channel', { exact: true }).selectOption({ label: '#general' });
    await page.getByLabel(/Also post MP3s/).check();
    await page
      .locator('form', { has: page.getByLabel('Channel', { exact: true }) })
      .getByRole('button', { name: 'Add' })
      .click();
    await text('#autoread-list').toContain('#general (MP3s)');
    // An allowed bot (/reading bot-add) by keyboard alone: its labelled field, Enter; listed with its remove button.
    await page.getByLabel('Bot mention or id, or webhook id').focus();
    await page.keyboard.type('<@3000000000000000001>');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('button', { name: 'Delete 3000000000000000001' }).count(), POLL).toBe(1);
    const from = emulator.requests().length;
    await discord.sendMessage({
      channelId: DEFAULT_IDS.general,
      author: { id: DEFAULT_IDS.alice, username: 'alice' },
      content: 'ABC と XYZ と GPU',
    });
    await expect
      .poll(
        () =>
          emulator
            .requests()
            .slice(from)
            .find((r) => r.target === 'standard')?.body,
        { timeout: 20_000 },
      )
      .toMatchObject({ voice: VOICE, text: expect.stringContaining(READ_AS) });

    await page.getByRole('link', { name: 'Usage' }).click();
    await count('.bars li').toBe(30);
    await text('table:not(.channels) caption').toBe('Who spent the most');
    // Beside the usage, the voice channels read now (none here: the bot is in no call).
    await text('#voice-health').toContain('No voice channel of this server is read now.');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await count('table.audit tbody tr').toBe(6);
    await text('table.audit tbody').toContain('Reading: allowed bot 3000000000000000001');
    await text('table.audit tbody').toContain('Bob (dashboard)');
    await text('table.audit tbody').toContain(`/config voice changed to ${VOICE}`);
    await text('table.audit tbody').toContain('added GPU → じーぴーゆー');
    await text('table.audit tbody').toContain('Auto-read: added channel #general');
  });

  it('a forged or missing CSRF token changes nothing; screenshots in Japanese and English, desktop and phone', async () => {
    const before = await pageApi('GET', `/guilds/${guildId}`, null);
    expect(before.status).toBe(200);
    for (const csrf of [null, 'forged-token-forged-token-forged-token-xx']) {
      const refused = await pageApi('PATCH', `/guilds/${guildId}/settings`, csrf, { voice: 'ja-JP-Wavenet-A', speed: 3 });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('csrf');
    }
    expect((await pageApi('GET', `/guilds/${guildId}`, null)).body.settings).toEqual(before.body.settings);

    mkdirSync(SCREENSHOTS, { recursive: true });
    const shots: string[] = [];
    const tab = async (name: RegExp) => {
      await page.getByRole('link', { name }).click();
      await page.locator('main[aria-busy="false"] section').first().waitFor();
    };
    for (const lang of ['ja', 'en'] as const) {
      await page.locator('#lang').selectOption(lang);
      for (const [name, link] of [
        ['settings', /^(サーバー設定|Server settings)$/],
        ['usage', /^(利用状況|Usage)$/],
        ['audit', /^(変更履歴|Audit log)$/],
        ['me', /^(自分の設定|My settings)$/],
      ] as const) {
        await tab(link);
        for (const [width, height, size] of [
          [1280, 900, 'desktop'],
          [390, 844, 'phone'],
        ] as const) {
          await page.setViewportSize({ width, height });
          const path = join(SCREENSHOTS, `dashboard-${lang}-${name}-${size}.png`);
          await page.screenshot({ path, fullPage: true });
          shots.push(path);
        }
      }
    }
    await text('h1').toBe('Read-aloud dashboard');
    await page.locator('#lang').selectOption('ja');
    await text('h1').toBe('読み上げダッシュボード');
    console.log(`dashboard screenshots:\n${shots.join('\n')}`);
    await page.locator('#lang').selectOption('en');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("the audit log says what changed in words, in the page's language, and fits a phone; the usage chart is labelled", async () => {
    await page.locator('#lang').selectOption('ja');
    await page.getByRole('link', { name: '変更履歴' }).click();
    // The setting as /設定 names it for a Japanese member, never the stored field name.
    await text('table.audit tbody').toContain(`/設定 声 を ${VOICE} に変更`);
    await text('table.audit tbody').toContain('自動読み上げ：チャンネル #general を追加（MP3 投稿）');
    const audit = await page.locator('table.audit tbody').innerText();
    expect(audit).not.toMatch(/voice =|speed|ChannelId|RoleId|merge/);
    await page.locator('#lang').selectOption('en');
    await text('table.audit tbody').toContain(`/config voice changed to ${VOICE}`);

    // On a phone each change is a line of when and who (never broken), then what; the page stays short.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#lang').selectOption('ja');
    await text('table.audit tbody').toContain('/設定 声');
    const layout = await page.evaluate(() => {
      type Box = { top: number; height: number };
      type El = { getBoundingClientRect(): Box };
      const { document, getComputedStyle } = globalThis as unknown as {
        document: {
          querySelectorAll(s: string): ArrayLike<El>;
          createRange(): { selectNodeContents(n: El): void; getBoundingClientRect(): Box };
          documentElement: { scrollHeight: number };
        };
        getComputedStyle(e: El): { lineHeight: string };
      };
      // How many lines the cell's text takes: the height of its text over its line height.
      const lines = (el: El) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return Math.round(range.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight));
      };
      return {
        who: Array.from(document.querySelectorAll('table.audit td.who')).map(lines),
        rows: Array.from(document.querySelectorAll('table.audit tbody tr')).length,
        height: document.documentElement.scrollHeight,
      };
    });
    expect(layout.rows).toBe(6);
    expect(layout.who).toEqual(Array(6).fill(1));
    // The header, the tabs, then at most about three lines a change: 1,050 px for six, not thousands.
    console.log(`audit log on a phone: ${layout.height} px for ${layout.rows} changes`);
    expect(layout.height).toBeLessThan(1050);

    // The usage chart: a date under every seventh day, and a scale from 0 to a round top.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('link', { name: '利用状況' }).click();
    await count('.bars li').toBe(30);
    expect(await page.locator('.bars .tick').count()).toBe(5);
    expect(await page.locator('.bars .tick').first().innerText()).toMatch(/^\d{1,2}\/\d{1,2}$/);
    const scale = await page.locator('.scale span').allInnerTexts();
    expect(scale).toHaveLength(3);
    expect(scale[2]).toBe('0');
    expect(Number(scale[0]!.replace(/,/g, ''))).toBe(2 * Number(scale[1]!.replace(/,/g, '')));
    await text('figure.chart figcaption').toBe('1日あたりの文字数');

    // Bob's own usage is nothing yet: said in words, not a row of empty bars. His three forms (voice, volume, dictionary) fill the width.
    await page.getByRole('link', { name: '自分の設定' }).click();
    await text('main .empty').toBe('今期はまだ使われていません。');
    expect(await page.locator('main .bars').count()).toBe(0);
    const grid = await page.locator('main .grid').evaluate((g) => {
      const box = (e: { getBoundingClientRect(): { left: number; right: number } }) => e.getBoundingClientRect();
      const forms = Array.from(
        (g as unknown as { children: ArrayLike<{ tagName: string; getBoundingClientRect(): { left: number; right: number } }> }).children,
      ).filter((c) => c.tagName === 'FORM');
      return { right: box(g as never).right, formsRight: Math.max(...forms.map((f) => box(f).right)), forms: forms.length };
    });
    expect(grid.forms).toBe(3);
    expect(grid.right - grid.formsRight).toBeLessThan(2);
    await page.locator('#lang').selectOption('en');
  });

  it("sign-out ends the session; a member who is no admin sees only their own settings; the API refuses the server's", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#signin').waitFor();
    expect((await pageApi('GET', '/guilds', null)).status).toBe(401);

    // The local Discord's sign-in page for a Japanese browser: in Japanese, each person as the server names them.
    await page.setExtraHTTPHeaders({ 'accept-language': 'ja' });
    await page.goto(url);
    await page.locator('#signin').click();
    await page.locator('button[value="authorize"]', { hasText: '認証' }).waitFor();
    expect(await page.locator('label[for="user"]').textContent()).toBe('サインインするユーザー');
    await page.screenshot({ path: join(SCREENSHOTS, 'local-discord-signin-ja.png') });
    await page.setExtraHTTPHeaders({});
    await signIn(DEFAULT_IDS.alice);
    await text('.server').not.toContain('Admin');
    await page.goto(`${url}/#/g/${guildId}/settings`);
    await page.getByRole('heading', { name: 'My voice in this server' }).waitFor();
    expect(await page.getByRole('link', { name: 'Server settings' }).count()).toBe(0);
    const view = await pageApi('GET', `/guilds/${guildId}`, null);
    expect(view.status).toBe(403);
    expect(view.body.error).toBe('not_manager');
    const session = await pageApi('GET', '/session', null);
    const change = await pageApi('PATCH', `/guilds/${guildId}/settings`, session.body.csrf, { voice: 'ja-JP-Wavenet-A' });
    expect(change.status).toBe(403);

    // The session cookie is HttpOnly and SameSite=Lax; neither it nor the client secret is ever logged.
    const cookie = (await browser.context.cookies(url)).find((c) => c.name === 'ydash_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false });
    const logged = JSON.stringify(bot.logs) + bot.stderr();
    expect(logged).not.toContain(discord.bots[0]!.clientSecret);
    expect(logged).not.toContain(cookie.value);
  });

  it('a paste over 3 MB is refused by the page in its language, and by the dashboard at once if sent anyway; nothing changes', async () => {
    await page.goto(`${url}/#/g/${guildId}/me`);
    await page.getByRole('heading', { name: 'My own dictionary' }).waitFor();
    const big = 'word\treading\n'.repeat(250_000);
    // The page is drawn again in the other language: the paste is made again there.
    for (const [lang, check, refused] of [
      ['en', 'Check', 'That is too large (at most 3 MB). Nothing was changed.'],
      ['ja', '確認', '大きすぎます（3 MB まで）。何も変更していません。'],
    ] as const) {
      await page.locator('#lang').selectOption(lang);
      await page.locator('details.bulk summary').click();
      // Pasted at once (typing 3 MB would take minutes).
      await page.locator('details.bulk textarea').evaluate((area, value) => ((area as unknown as { value: string }).value = value), big);
      // Clicked without waiting for the 3 MB text area's layout (seconds, for nothing this test is about).
      await page.locator('details.bulk').getByRole('button', { name: check }).first().dispatchEvent('click');
      await text('#status').toBe(refused);
    }
    await page.locator('#lang').selectOption('en');
    // Sent by a script anyway: answered 413 with the reason, not left waiting.
    const csrf = (await pageApi('GET', '/session', null)).body.csrf as string;
    const sent = await page.evaluate(
      async ([path, csrf]) => {
        const started = performance.now();
        const body = JSON.stringify({ text: 'ことば\tことば\n'.repeat(220_000) });
        const headers = { 'content-type': 'application/json', 'x-csrf-token': csrf, 'x-lang': 'ja' };
        const res = await fetch(`/api${path}`, { method: 'POST', headers, body });
        return { status: res.status, body: await res.json(), ms: performance.now() - started };
      },
      [`/me/${guildId}/dictionary/import`, csrf] as const,
    );
    expect(sent).toMatchObject({ status: 413, body: { error: 'too_large', message: '大きすぎます（3 MB まで）。何も変更していません。' } });
    expect(sent.ms).toBeLessThan(5_000);
    expect((await pageApi('GET', `/me/${guildId}`, null)).body.dictionary).toEqual([]);
  });
});
