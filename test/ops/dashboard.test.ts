import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BotMetrics } from '../../src/ops/metrics.ts';

// The Grafana dashboard in the repo only queries metrics the bot exports (a renamed
// metric, or a query typed by hand against a name that never existed, shows an empty panel).
const DASHBOARD = new URL('../../docs/grafana/yomiage-dashboard.json', import.meta.url);

interface Panel {
  title: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

/** Every sample name the bot's registry exposes: counters and gauges as named, histograms as _bucket, _sum, _count. */
async function exportedSamples(): Promise<Set<string>> {
  const metrics = await new BotMetrics().registry.getMetricsAsJSON();
  return new Set(
    metrics.flatMap((m) =>
      String(m.type) === 'histogram' || String(m.type) === 'summary'
        ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`, m.name]
        : [m.name],
    ),
  );
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'le',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: identifiers that are not functions (followed by
 * `(`), not keywords, not inside label matchers `{...}`, grouping lists `by (...)`, ranges `[...]`
 * or strings.
 */
function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/([a-zA-Z_:][\w:]*)\s*(\()?/g)].filter((m) => !m[2] && !KEYWORDS.has(m[1]!.toLowerCase())).map((m) => m[1]!);
}

function panelsOf(list: Panel[]): Panel[] {
  return list.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);
}

describe('docs/grafana/yomiage-dashboard.json', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const panels = panelsOf(dashboard.panels);
  const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr ?? '' })));

  it('shows requests vs the window, spend per day, wait p95 and cache hit rate', () => {
    const uses = (name: string) =>
      panels.filter((p) => (p.targets ?? []).some((t) => metricsIn(t.expr ?? '').some((m) => m.startsWith(name))));
    expect(uses('yomiage_tts_requests_total').some((p) => uses('yomiage_rate_window_used').includes(p))).toBe(true);
    expect(queries.some((q) => /increase\(yomiage_characters_spent_total\[1d\]\)/.test(q.expr))).toBe(true);
    expect(queries.some((q) => /histogram_quantile\(0\.95,.*yomiage_speech_wait_seconds_bucket/.test(q.expr))).toBe(true);
    expect(queries.some((q) => q.expr.includes('yomiage_cache_hits_total') && q.expr.includes('yomiage_cache_misses_total'))).toBe(true);
    // The shared window is the same in every process: never summed.
    for (const q of queries.filter((q) => q.expr.includes('yomiage_rate_window_used')))
      expect(q.expr).not.toMatch(/sum\b[^(]*\([^)]*yomiage_rate_window_used/);
  });

  it('every query uses only metrics the bot exports', async () => {
    const exported = await exportedSamples();
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) {
      const used = metricsIn(q.expr);
      expect(used.length, `${q.panel}: ${q.expr}`).toBeGreaterThan(0);
      for (const name of used) expect(exported.has(name), `${q.panel}: ${name} is not exported`).toBe(true);
    }
  });

  it('the check itself catches a name the bot does not export', async () => {
    const exported = await exportedSamples();
    expect(metricsIn('histogram_quantile(0.95, sum by (le) (rate(yomiage_speech_wait_seconds_bucket{job="x"}[5m])))')).toEqual([
      'yomiage_speech_wait_seconds_bucket',
    ]);
    expect(metricsIn('sum(rate(yomiage_cache_hit_total[5m]))').every((n) => exported.has(n))).toBe(false);
    expect(metricsIn('max by (endpoint) (yomiage_rate_window_used) / 30')).toEqual(['yomiage_rate_window_used']);
  });
});
