/**
 * What Japanese communities asked for, shown in the playground as a member uses it (`npm run
 * playground`, the page in Chromium; open-playground.ts): two text channels read in one call
 * (/参加 in #general, then in #zatsudan and its button), the voice channel status naming both
 * under the channel's name, and the web dashboard's health card listing both (signed in from the
 * page's link as the server's admin); Alice and タロー heard in the two different voices of the server's
 * voice pool with no admin step (the request log and the utterances name each voice); an image
 * attached from the composer's "+" menu with the alt text written in Discord's attachment editor,
 * read as "画像: …"; a poll made in Discord's poll editor, voted on as several members, ended early
 * by its author, and its result read; the admin, はるか, adds a filtered word and follows the
 * operator's curated dictionary from the command form, and the next messages are read with them
 * (the request log's text). The Japanese page shows none of the page's English texts
 * around the new controls; screenshots of the composer's attachment and poll editor in Japanese and
 * English, desktop and phone, go to test-results/. Runs with `npm run test:browser`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAYGROUND_CURATED_DICTIONARY, PLAYGROUND_IDS, PLAYGROUND_VOICE_POOL } from '../../src/world.ts';
import { openPlayground, pageEnglishShown, SCREENSHOTS, type OpenPlayground } from './open-playground.ts';

const [ALICE_VOICE, TARO_VOICE] = PLAYGROUND_VOICE_POOL;

let session: OpenPlayground;
let page: Page;

beforeAll(async () => {
  session = await openPlayground();
  page = session.page;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.selectOption('#locale', 'ja');
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await session?.close();
});

const actAs = (id: string) => page.selectOption('#as-member', id);
const inChannel = (name: string) => page.locator('#text-channels button', { hasText: name }).click();

async function write(text: string): Promise<void> {
  await page.fill('#message', text);
  await page.press('#message', 'Enter');
  await page.locator('#timeline li.member', { hasText: text }).waitFor();
}

/** Runs a slash command from the page's form as the member acted as; the bot's private answer containing `answer`. */
async function command(name: string, sub: string, values: Record<string, string>, answer: string): Promise<string> {
  const before = await page.locator('#timeline li.bot.ephemeral', { hasText: answer }).count();
  await page.selectOption('#command', name);
  await page.selectOption('#subcommand', sub);
  for (const [option, value] of Object.entries(values)) await page.fill(`#opt-${option}`, value);
  await page.click('#run-command');
  const reply = page.locator('#timeline li.bot.ephemeral', { hasText: answer }).nth(before);
  await reply.waitFor({ timeout: 30_000 });
  return (await reply.textContent()) ?? '';
}

/** The request the bot sent the speech service for a text matching `pattern` (the page's request log): its text and voice. */
async function request(pattern: RegExp): Promise<{ text: string; voice: string }> {
  const row = page.locator('#requests tbody tr', { has: page.locator('td.text', { hasText: pattern }) }).first();
  await row.waitFor({ timeout: 30_000 });
  return { text: (await row.locator('td.text').getAttribute('title')) ?? '', voice: (await row.locator('td.voice').textContent()) ?? '' };
}

/** The utterance heard with `text` in it, once played (what the page's member heard, and which voice said it). */
async function heard(text: string): Promise<string> {
  const utterance = page.locator('#utterances li.done', { hasText: text }).first();
  await utterance.waitFor({ timeout: 30_000 }).catch(async (error: Error) => {
    throw new Error(`${error.message}\nheard: ${(await page.locator('#utterances li').allInnerTexts()).join('\n')}`);
  });
  return (await utterance.textContent()) ?? '';
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

describe('community features in the playground', () => {
  it('two text channels read in one call (/参加 in #general, then in #zatsudan and its button); the status under Voice names both', async () => {
    await actAs(PLAYGROUND_IDS.alice);
    await page.click('#step-voice');
    await page.locator('#voice-channels .voice-channel', { hasText: 'Voice' }).locator('li', { hasText: 'Alice' }).first().waitFor();
    await inChannel('general');
    await page.selectOption('#command', 'join');
    await page.click('#run-command');
    await page.locator('#timeline li.bot', { hasText: '参加しました' }).waitFor({ timeout: 30_000 });

    await inChannel('zatsudan');
    await page.selectOption('#command', 'join');
    await page.click('#run-command');
    // Asked privately, with Discord's buttons; a click adds the channel, and the channel is told.
    const question = page.locator('#timeline li.bot.ephemeral', { hasText: 'このチャンネル（#zatsudan）も読み上げますか' });
    await question.waitFor({ timeout: 30_000 });
    await question.getByRole('button', { name: 'このチャンネルも読み上げる' }).click();
    await page.locator('#timeline li.bot', { hasText: 'このチャンネル（#zatsudan）も #Voice で読み上げます。' }).waitFor();
    // Under the voice channel's name, as Discord shows a voice channel status.
    const status = page.locator('#voice-channels .voice-channel', { hasText: 'Voice' }).first().locator('.voice-status');
    await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('📖 #general、#zatsudan を読み上げ中');
    expect(await page.locator('#voice-channels .voice-channel', { hasText: 'Voice 2' }).locator('.voice-status').count()).toBe(0);
  });

  it("the web dashboard's health card (はるか, an admin, signed in from the page's link) lists both text channels the call reads", async () => {
    const dashboard = await page.context().newPage();
    try {
      await dashboard.goto((await page.getAttribute('#dashboard-link', 'href'))!);
      await dashboard.locator('#signin').click();
      await dashboard.locator('#user').selectOption(PLAYGROUND_IDS.haruka);
      await dashboard.locator('button[value="authorize"]').click();
      await dashboard.locator('.server').first().waitFor();
      await dashboard.evaluate(
        (hash) => ((globalThis as unknown as { location: { hash: string } }).location.hash = hash),
        `#/g/${PLAYGROUND_IDS.guild}/usage`,
      );
      const row = dashboard.locator('#voice-health tbody tr', { hasText: 'Voice' });
      await row.waitFor({ timeout: 15_000 });
      // In the browser's language (the page's own choice): the channels in order, listed as it lists things.
      expect(await row.locator('td').nth(1).textContent()).toMatch(/^#general(、|, )#zatsudan$/);
    } finally {
      await dashboard.close();
    }
  });

  it("Alice and タロー, without voices of their own, are heard in the server's pool's two voices: one in #zatsudan, one in #general", async () => {
    await actAs(PLAYGROUND_IDS.taro);
    await page.click('#voice-toggle');
    await page.locator('#voice-channels .voice-channel', { hasText: 'Voice' }).locator('li', { hasText: 'タロー' }).first().waitFor();
    await write('ざつだんのはなしです'); // still in #zatsudan
    await actAs(PLAYGROUND_IDS.alice);
    await inChannel('general');
    await write('いっぱんのはなしです');

    const taro = await request(/ざつだんのはなしです/);
    const alice = await request(/いっぱんのはなしです/);
    expect(taro).toEqual({ text: 'タロー、ざつだんのはなしです', voice: TARO_VOICE });
    expect(alice).toEqual({ text: 'Alice、いっぱんのはなしです', voice: ALICE_VOICE });
    // Both heard in the call, each in its own voice (the page matched the audio to the clip the service made).
    expect(await heard('ざつだんのはなしです')).toMatch(new RegExp(`聞いた人: (Alice, タロー|タロー, Alice).*声: ${TARO_VOICE}`));
    expect(await heard('いっぱんのはなしです')).toMatch(new RegExp(`聞いた人: (Alice, タロー|タロー, Alice).*声: ${ALICE_VOICE}`));
  });

  it('an image attached from the "+" menu with alt text written in the attachment editor is shown with it and read as "画像: …"', async () => {
    // A file over Discord's 10 MB is refused at once, in the page's language; nothing is attached.
    await page.setInputFiles('#file-input', { name: 'huge.png', mimeType: 'image/png', buffer: Buffer.alloc(10 * 1024 * 1024 + 1) });
    expect(await page.textContent('#message-error')).toBe('huge.png は 10 MB を超えています。Discordは送信しません。');
    expect(await page.locator('#attachments').isVisible()).toBe(false);

    await page.click('#composer-plus');
    await page.locator('.menu', { hasText: '投票を作成' }).waitFor();
    const menu = await page.locator('.menu .menu-item').allInnerTexts();
    expect(menu).toEqual(['ファイルをアップロード', 'サンプル画像を添付', '投票を作成']);
    expect((await pageEnglishShown(page)).found).toEqual([]);
    await page.locator('.menu-item', { hasText: 'サンプル画像を添付' }).click();
    const tile = page.locator('#attachments .tile', { hasText: 'sunset.png' });
    await tile.waitFor();
    await tile.getByRole('button', { name: '添付ファイル sunset.png を編集' }).click();
    const editor = page.locator('#attachment-editor[open]');
    await editor.getByLabel('説明（代替テキスト）').fill('夕焼けの海');
    await screenshot('community-ja-1280-attachment-editor');
    await editor.getByRole('button', { name: '保存' }).click();
    expect(await tile.locator('.alt-line .body').textContent()).toBe('夕焼けの海');
    expect((await pageEnglishShown(page)).found).toEqual([]);
    await screenshot('community-ja-1280-attachment');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot('community-ja-390-attachment');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Enter with no text sends the file alone, as in Discord.
    await page.press('#message', 'Enter');
    const sent = page.locator('#timeline li.member', { has: page.locator('img[alt="夕焼けの海"]') });
    await sent.waitFor();
    // The tray empties once the send is answered, which may come after the message shows in the timeline.
    await expect.poll(() => page.locator('#attachments').isVisible()).toBe(false);
    // The image is shown (the file the member attached), its alt text behind the badge.
    await expect.poll(() => sent.locator('img').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(320);
    await sent.getByRole('button', { name: '説明（代替テキスト）' }).click();
    expect(await sent.locator('.alt-text').isVisible()).toBe(true);
    await screenshot('community-ja-1280-image-sent');
    // (Her name is read unless she spoke a moment ago.)
    const read = await request(/夕焼けの海/);
    expect(read.text).toMatch(/^(Alice、)?画像: 夕焼けの海$/);
    expect(read.voice).toBe(ALICE_VOICE);
  });

  it('a poll from the "+" menu: members vote, its author ends it now, and the result Discord posts is shown and read', async () => {
    await page.click('#composer-plus');
    await page.locator('.menu-item', { hasText: '投票を作成' }).click();
    const editor = page.locator('#poll-editor[open]');
    await editor.waitFor();
    // Nothing posted without a question and an answer, said in Japanese.
    await editor.getByRole('button', { name: '投稿' }).click();
    expect(await editor.locator('.error').textContent()).toBe('質問は必須です · 回答を1つ以上入力してください');
    await editor.getByLabel('質問').fill('昼ごはんは何にする');
    await editor.getByLabel('回答1').fill('ラーメン');
    await editor.getByLabel('回答2').fill('カレー');
    expect((await pageEnglishShown(page)).found).toEqual([]);
    await screenshot('community-ja-1280-poll-editor');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot('community-ja-390-poll-editor');
    await page.setViewportSize({ width: 1280, height: 800 });
    await editor.getByRole('button', { name: '投稿' }).click();
    await expect.poll(() => page.locator('#poll-editor[open]').count()).toBe(0);

    const poll = page.locator('#timeline li.poll-message', { hasText: '昼ごはんは何にする' });
    await poll.waitFor();
    const asked = await request(/昼ごはんは何にする/);
    expect(asked.text).toMatch(/^(Alice、)?投票、昼ごはんは何にする、選択肢、ラーメン、カレー$/);
    expect(asked.voice).toBe(ALICE_VOICE);
    // Alice and タロー vote ラーメン, はるか カレー (each click as the member the page acts as).
    const vote = (answer: string) => poll.getByRole('button', { name: `${answer} に投票` }).click();
    await vote('ラーメン');
    await expect.poll(() => poll.locator('.poll-answer.mine').count()).toBe(1);
    await actAs(PLAYGROUND_IDS.taro);
    await vote('ラーメン');
    // Only the author may end it early: タロー sees no such control.
    expect(await poll.getByRole('button', { name: '今すぐ投票を終了' }).count()).toBe(0);
    await actAs(PLAYGROUND_IDS.haruka);
    await vote('カレー');
    await expect.poll(() => poll.locator('.poll-footer').textContent()).toMatch(/^3票 · 残り24時間/);
    expect(await poll.getByRole('button', { name: 'ラーメン に投票' }).textContent()).toContain('2票・67%');

    await actAs(PLAYGROUND_IDS.alice);
    await poll.getByRole('button', { name: '今すぐ投票を終了' }).click();
    const result = page.locator('#timeline li.poll-result-message');
    await result.waitFor();
    expect(await result.innerText()).toMatch(/📊 Alice の投票「昼ごはんは何にする」が終了しました\s*🏆 ラーメン\s*1位・全3票中2票/);
    await expect.poll(() => poll.locator('.poll-footer').textContent()).toMatch(/投票は終了しました/);
    expect(await poll.getByRole('button', { name: 'カレー に投票' }).isDisabled()).toBe(true);
    // The result is read without a name, in the poll's author's voice (theirs to pay for).
    expect(await request(/投票結果/)).toEqual({ text: '投票結果、昼ごはんは何にする、1位はラーメン、全3票中2票', voice: ALICE_VOICE });
    await screenshot('community-ja-1280-poll');
  });

  it('はるか adds a filter in the command form (/フィルター 追加): a message with the word is read with "ピー" in its place, the word never sent', async () => {
    await actAs(PLAYGROUND_IDS.haruka);
    await inChannel('general');
    const reply = await command('filter', 'add', { word: 'ネタバレ' }, 'フィルターを追加しました');
    expect(reply).toContain('フィルターを追加しました: 「ネタバレ」は「ピー」と読みます。');
    await actAs(PLAYGROUND_IDS.alice);
    await write('昨日の映画のネタバレをします');
    expect((await request(/昨日の映画の/)).text).toMatch(/^(Alice、)?昨日の映画のピーをします$/);
    const sent = await page.locator('#requests tbody td.text').evaluateAll((cells) => cells.map((c) => c.getAttribute('title') ?? ''));
    expect(sent.filter((text) => text.includes('ネタバレ'))).toEqual([]);
  });

  it("はるか follows the operator's curated dictionary, picked from the command's suggestions (/辞書 フォロー): its words are read as it says", async () => {
    await actAs(PLAYGROUND_IDS.haruka);
    const { name } = PLAYGROUND_CURATED_DICTIONARY;
    await page.selectOption('#command', 'dictionary');
    await page.selectOption('#subcommand', 'follow');
    // The bot's suggestions, as Discord shows them while typing: the curated list by its name.
    await page.focus('#opt-source');
    const suggestion = page.locator(`#opt-source-choices option[value="curated:${name}"]`);
    await suggestion.waitFor({ state: 'attached', timeout: 10_000 });
    expect(await suggestion.textContent()).toBe(`共有辞書「${name}」`);
    const reply = await command('dictionary', 'follow', { source: `curated:${name}` }, 'フォローしました');
    expect(reply).toContain(`共有辞書「${name}」をフォローしました。`);
    await actAs(PLAYGROUND_IDS.alice);
    await write('gg また明日');
    expect((await request(/また明日/)).text).toMatch(/^(Alice、)?ぐっどげーむ また明日$/);
  });

  it('in English: the "+" menu, the attachment editor and the poll editor (screenshots at desktop and phone widths)', async () => {
    await page.selectOption('#locale', 'en-US');
    await page.click('#composer-plus');
    expect(await page.locator('.menu .menu-item').allInnerTexts()).toEqual(['Upload a file', 'Attach a sample image', 'Create poll']);
    await page.locator('.menu-item', { hasText: 'Attach a sample image' }).click();
    const tile = page.locator('#attachments .tile', { hasText: 'sunset.png' });
    await tile.getByRole('button', { name: 'Modify attachment sunset.png' }).click();
    await page.locator('#attachment-editor[open]').getByLabel('Description (alt text)').fill('sunset over the sea');
    await screenshot('community-en-1280-attachment-editor');
    await page.locator('#attachment-editor[open]').getByRole('button', { name: 'Save' }).click();
    await screenshot('community-en-1280-attachment');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot('community-en-390-attachment');
    // Taken back: nothing is sent.
    await tile.getByRole('button', { name: 'Remove attachment sunset.png' }).click();
    expect(await page.locator('#attachments').isVisible()).toBe(false);

    await page.click('#composer-plus');
    await page.locator('.menu-item', { hasText: 'Create poll' }).click();
    const editor = page.locator('#poll-editor[open]');
    await editor.getByLabel('Question').fill('Where shall we meet?');
    await editor.getByLabel('Answer 1').fill('Station');
    await editor.getByRole('button', { name: '+ Add another answer' }).click();
    expect(await editor.locator('.poll-editor-answers input').count()).toBe(3);
    await screenshot('community-en-390-poll-editor');
    await page.setViewportSize({ width: 1280, height: 800 });
    await screenshot('community-en-1280-poll-editor');
    await editor.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.locator('#timeline li.poll-message').count()).toBe(1);
  });
});
