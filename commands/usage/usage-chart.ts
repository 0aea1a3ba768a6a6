import { existsSync } from 'node:fs';
import type { DailySpend } from '../../src/billing/ledger.ts';

type Canvas = typeof import('@napi-rs/canvas');

// /usage's chart: the period's spend by day as a small PNG, drawn in this process with
// @napi-rs/canvas (prebuilt, no system libraries), loaded on first use: where its binary cannot
// load, /usage answers with the numbers alone instead of the bot failing to start. Labels may be Japanese, so a CJK font is
// registered from the system's files (fonts-noto-cjk on Debian, which scripts/bootstrap.sh
// installs through .ci/run); without one the bars and numbers still draw, the CJK labels as boxes.

const FONT_FAMILY = 'YomiageChartCJK';
const FONT_FILES = [
  '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc',
  '/usr/share/fonts/opentype/noto/NotoSansCJKjp-Regular.otf',
  '/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc',
  '/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc',
  '/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc',
];

export const CHART_SIZE = { width: 640, height: 260 } as const;

let canvasModule: Promise<Canvas | null> | undefined;
let fontFile: string | null | undefined;

/** The CJK font file the chart uses, or null when the system has none. */
export function chartFont(): string | null {
  fontFile ??= FONT_FILES.find((f) => existsSync(f)) ?? null;
  return fontFile;
}

/** @napi-rs/canvas with the CJK font registered, or null when it cannot load here. */
function loadCanvas(): Promise<Canvas | null> {
  canvasModule ??= import('@napi-rs/canvas').then(
    (mod) => {
      const font = chartFont();
      if (font) mod.GlobalFonts.registerFromPath(font, FONT_FAMILY);
      return mod;
    },
    () => null,
  );
  return canvasModule;
}

interface ChartLabels {
  title: string;
  /** The day's label under its bar, e.g. "11/22". */
  day(dayStart: number): string;
}

/** A bar per day of the period; PNG bytes, or undefined when the canvas library cannot load here. */
export async function renderUsageChart(days: readonly DailySpend[], labels: ChartLabels): Promise<Buffer | undefined> {
  const mod = await loadCanvas();
  if (!mod) return undefined;
  const { width, height } = CHART_SIZE;
  const canvas = mod.createCanvas(width, height);
  const g = canvas.getContext('2d');
  const font = (px: number) => `${px}px ${FONT_FAMILY}, sans-serif`;
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, width, height);
  g.fillStyle = '#1f2937';
  g.font = font(16);
  g.fillText(labels.title, 16, 24);
  const left = 48;
  const bottom = height - 32;
  const top = 40;
  const plotWidth = width - left - 16;
  // The scale: a round top and a gridline with its value at every round step (not only 0 and the top).
  const step = roundStep(Math.max(1, ...days.map((d) => d.chars)) / 4);
  const max = Math.ceil(Math.max(1, ...days.map((d) => d.chars)) / step) * step;
  g.font = font(11);
  for (let value = 0; value <= max; value += step) {
    const y = Math.round(bottom - ((bottom - top) * value) / max) + 0.5;
    g.strokeStyle = value === 0 ? '#9ca3af' : '#e5e7eb';
    g.beginPath();
    g.moveTo(left, y);
    g.lineTo(left + plotWidth, y);
    g.stroke();
    g.fillStyle = '#4b5563';
    g.textAlign = 'right';
    g.fillText(String(value), left - 6, y + 4);
  }
  g.textAlign = 'left';
  g.strokeStyle = '#9ca3af';
  g.beginPath();
  g.moveTo(left, top);
  g.lineTo(left, bottom);
  g.stroke();
  const slot = plotWidth / Math.max(1, days.length);
  days.forEach((d, i) => {
    const h = Math.round(((bottom - top) * d.chars) / max);
    g.fillStyle = '#2563eb';
    g.fillRect(left + i * slot + 2, bottom - h, Math.max(1, slot - 4), h);
    // Every fifth day's date, and the first.
    if (i % 5 === 0) {
      g.fillStyle = '#4b5563';
      g.fillText(labels.day(d.dayStart), left + i * slot, bottom + 16);
    }
  });
  return canvas.toBuffer('image/png');
}

/** The smallest of 1, 2 or 5 times a power of ten that is at least `raw` (a whole number of characters). */
export function roundStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
}
