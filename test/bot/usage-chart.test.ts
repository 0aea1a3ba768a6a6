import { loadImage, createCanvas } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_SIZE, chartFont, roundStep } from '../../commands/usage/usage-chart.ts';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { sleep, type Clock } from '../../src/util/clock.ts';
import { startHarness, type Harness } from '../support/bot-harness.ts';

// /usage shows the period's spend by day as a PNG and as numbers, end to end
// (loopback Discord, emulator, real SQLite). The bot's clock is moved across days.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const DAY = 86_400_000;
const start = Date.parse('2026-11-01T00:00:00Z'); // BILLING_PERIOD_START's default
let offset = start + 2 * DAY + 10 * 3_600_000 - Date.now(); // 11/3 10:00 UTC
const clock: Clock = { now: () => Date.now() + offset, sleep };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ bot: { clock } });
}, 60_000);
afterAll(async () => h?.close());

async function say(user: { id: string; username: string }, text: string) {
  const i = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user,
    name: 'say',
    locale: 'en-US',
    options: [{ name: 'text', type: 3, value: text }],
  });
  await i.waitForResponse((r) => r.files.length > 0, 20_000);
}
async function usage(user: { id: string; username: string }, locale = 'en-US') {
  const i = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user, name: 'usage', locale });
  return i.waitForResponse((r) => r.kind === 'callback', 10_000);
}
/** What the ledger itself says, per day of the period (M/D -> characters), for one member or all. */
function ledgerDays(userId?: string): Map<string, number> {
  const rows = h.bot.db
    .prepare("SELECT user_id, chars, created_at FROM character_ledger WHERE guild_id = ? AND state != 'released'")
    .all(guildId) as { user_id: string; chars: number; created_at: number }[];
  const days = new Map<string, number>();
  for (const r of rows.filter((r) => !userId || r.user_id === userId)) {
    const d = new Date(start + Math.floor((r.created_at - start) / DAY) * DAY);
    const key = `${d.getUTCMonth() + 1}/${d.getUTCDate()}`;
    days.set(key, (days.get(key) ?? 0) + r.chars);
  }
  return days;
}
/** The "M/D N · M/D N" line of the reply, as a map. */
const textDays = (content: string) => new Map([...content.matchAll(/(\d+\/\d+) (\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
/** Blue bar pixels per column of the chart. */
async function barColumns(png: Buffer): Promise<number[]> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const g = canvas.getContext('2d');
  g.drawImage(image, 0, 0);
  const { data } = g.getImageData(0, 0, image.width, image.height);
  const columns = new Array<number>(image.width).fill(0);
  for (let p = 0; p < data.length; p += 4)
    if (data[p] === 0x25 && data[p + 1] === 0x63 && data[p + 2] === 0xeb) columns[(p / 4) % image.width]! += 1;
  return columns;
}

/** Rows of the chart drawn mostly in the gridline grey (#e5e7eb). */
async function gridlines(png: Buffer): Promise<number> {
  const image = await loadImage(png);
  const g = createCanvas(image.width, image.height).getContext('2d');
  g.drawImage(image, 0, 0);
  const { data } = g.getImageData(0, 0, image.width, image.height);
  let rows = 0;
  for (let y = 0; y < image.height; y++) {
    let grey = 0;
    for (let x = 0; x < image.width; x++) {
      const p = (y * image.width + x) * 4;
      if (data[p] === 0xe5 && data[p + 1] === 0xe7 && data[p + 2] === 0xeb) grey += 1;
    }
    if (grey > image.width / 3) rows += 1;
  }
  return rows;
}

describe('the chart scale', () => {
  it('GIVEN a quarter of the largest day THEN the step is the next 1, 2 or 5 times a power of ten', () => {
    expect([0.5, 1, 3, 7, 12, 26, 180, 2_400].map(roundStep)).toEqual([1, 1, 5, 10, 20, 50, 200, 5_000]);
  });
});

describe('/usage chart', () => {
  it('the PNG and the numbers follow the ledger, day by day, for a member and for the server', async () => {
    await say(alice, 'おはようございます');
    await say(bob, 'こんばんは、今日もよろしく');
    offset += DAY; // 11/4
    await say(alice, 'きょうはいいてんきですね、さんぽにいきましょう');

    const mine = await usage(alice);
    const content = String(mine.data?.content);
    expect(textDays(content)).toEqual(ledgerDays(alice.id));
    expect([...textDays(content).keys()]).toEqual(['11/3', '11/4']);
    const used = (await h.bot.context.budget.usage({ guildId, userId: alice.id })).used;
    expect(content).toContain(`${used} characters in all`);
    expect(content).toContain('This period: Nov 1, 2026 to Nov 30, 2026, the 30 days');
    const png = mine.files[0]!;
    expect(png.name).toBe('usage.png');
    const image = await loadImage(png.data);
    expect([image.width, image.height]).toEqual([CHART_SIZE.width, CHART_SIZE.height]);
    // Two bars, the second (longer text) taller, in the day slots of 11/3 and 11/4.
    const columns = await barColumns(png.data);
    const bars = columns.map((n, x) => ({ n, x })).filter((c) => c.n > 0);
    const slot = (CHART_SIZE.width - 64) / 30;
    const day3 = bars.filter((b) => Math.floor((b.x - 48) / slot) === 2);
    const day4 = bars.filter((b) => Math.floor((b.x - 48) / slot) === 3);
    expect(bars.length).toBe(day3.length + day4.length);
    const height = (bs: typeof bars) => Math.max(...bs.map((b) => b.n));
    const [d3, d4] = [ledgerDays(alice.id).get('11/3')!, ledgerDays(alice.id).get('11/4')!];
    expect(height(day4)).toBeGreaterThan(height(day3));
    expect(height(day3) / height(day4)).toBeCloseTo(d3 / d4, 1);
    // A scale to read the bars by: gridlines at round steps between 0 and the top, not only those two.
    expect(await gridlines(png.data)).toBeGreaterThanOrEqual(3);

    // An admin sees the server's days: every member's spend.
    const server = await usage(bob, 'ja');
    const serverText = String(server.data?.content);
    expect(serverText).toContain('サーバーの日ごとの利用');
    // One word for the billing period, text and chart alike, and the text says what it is.
    expect(serverText).not.toContain('今月');
    expect(serverText).toContain('Bob の今期の利用');
    expect(serverText).toContain('今期 = 2026/11/01〜2026/11/30（文字数を数える30日間');
    expect(textDays(serverText.split('サーバーの日ごとの利用')[1]!)).toEqual(ledgerDays());
    expect((await loadImage(server.files[0]!.data)).width).toBe(CHART_SIZE.width);
  }, 60_000);

  it('finds a CJK font on this machine (fonts-noto-cjk, installed by .ci/run)', () => {
    expect(chartFont()).toMatch(/Noto.*CJK/);
  });
});
