import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** The Debian font packages a setup script asks scripts/bootstrap.sh for. */
function fonts(script: string): string[] {
  const text = readFileSync(join(ROOT, script), 'utf8');
  return [...new Set([...text.matchAll(/'?\??(fonts-[a-z0-9-]+)'?/g)].map((m) => m[1]!))].sort();
}

describe('the setup scripts', () => {
  it('GIVEN a bare machine THEN scripts/playground.sh installs every font CI gives the page (Japanese text, icons, emoji)', () => {
    const pageFonts = fonts('.ci/run').filter((font) => font !== 'fonts-liberation'); // Chromium's default Latin, for the browser test
    expect(pageFonts).toEqual(expect.arrayContaining(['fonts-noto-cjk', 'fonts-noto-color-emoji']));
    expect(fonts('scripts/playground.sh')).toEqual(expect.arrayContaining(pageFonts));
  });
});
