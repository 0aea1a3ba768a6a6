import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Status } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { botEndpoints, botReadiness, type BotHealthDeps } from '../../src/ops/health.ts';
import { BotMetrics } from '../../src/ops/metrics.ts';
import { startOpsServer, type OpsServer } from '../../src/ops/ops-server.ts';
import { createLogger } from '../../src/util/log.ts';
import { getText } from '../support/ops.ts';

// The METRICS_PORT server over real HTTP, with a real SQLite file that another
// connection can lock, and the gateway's shard states as discord.js keeps them.
let dir: string;
let db: Db;
let server: OpsServer;
/** The readiness probe's clock: /readyz probes the database again only once it moved a second. */
let nowMs = 0;
const aSecondLater = () => (nowMs += 1_000);
const shards = new Map<number, { id: number; status: number }>([
  [0, { id: 0, status: Status.Ready }],
  [1, { id: 1, status: Status.Ready }],
]);
/** An extra bot account's gateway (EXTRA_DISCORD_TOKENS), over the same shard. */
const extraShards = new Map<number, { id: number; status: number }>([[0, { id: 0, status: Status.Ready }]]);
const extra: { client: { ws: { shards: typeof extraShards } }; state: 'starting' | 'serving' | 'down' } = {
  client: { ws: { shards: extraShards } },
  state: 'serving',
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'yomiage-ops-server-'));
  db = openDatabase(join(dir, 'bot.sqlite3'));
  const deps = { client: { ws: { shards } }, extras: () => [extra], db } as unknown as BotHealthDeps;
  server = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    endpoints: botEndpoints(new BotMetrics(), botReadiness(deps, { now: () => nowMs })),
    logger: createLogger({ level: 'silent' }),
  });
});
afterAll(async () => {
  await server?.close();
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('/readyz', () => {
  it('is 503 while a gateway shard is not ready, naming it, and 200 again once it is', async () => {
    shards.get(1)!.status = Status.Reconnecting;
    const down = await getText(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)).toMatchObject({
      status: 'not_ready',
      checks: { gateway: { ok: false, detail: 'shards_not_ready:1' }, database: { ok: true } },
    });
    shards.get(1)!.status = Status.Ready;
    expect((await getText(`${server.url}/readyz`)).status).toBe(200);
  });

  it("is 503 while an extra account's gateway shard is not ready, naming the account, and 200 again once it is", async () => {
    extraShards.get(0)!.status = Status.Connecting;
    const down = await getText(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.body)).toMatchObject({ checks: { gateway: { ok: false, detail: 'shards_not_ready:account1:0' } } });
    extraShards.get(0)!.status = Status.Ready;
    expect((await getText(`${server.url}/readyz`)).status).toBe(200);
  });

  it('is 200 but degraded while an extra account cannot log in (retried meanwhile): the main account serves on', async () => {
    extra.state = 'down';
    extraShards.get(0)!.status = Status.Disconnected;
    try {
      const degraded = await getText(`${server.url}/readyz`);
      expect(degraded.status).toBe(200);
      expect(JSON.parse(degraded.body)).toMatchObject({
        status: 'degraded',
        degraded: ['accounts'],
        checks: { gateway: { ok: true }, accounts: { ok: false, detail: 'cannot_log_in:account1' } },
      });
    } finally {
      extra.state = 'serving';
      extraShards.get(0)!.status = Status.Ready;
    }
    expect(JSON.parse((await getText(`${server.url}/readyz`)).body)).toMatchObject({ status: 'ready', degraded: [] });
  });

  it('is 503 while the database cannot take a write (another process holds its lock), and 200 once it can', async () => {
    const other = new Database(join(dir, 'bot.sqlite3'));
    other.exec('BEGIN IMMEDIATE');
    aSecondLater();
    try {
      const locked = await getText(`${server.url}/readyz`);
      expect(locked.status).toBe(503);
      expect(JSON.parse(locked.body)).toMatchObject({
        status: 'not_ready',
        checks: { gateway: { ok: true }, database: { ok: false, detail: 'db_busy' } },
      });
      // Alive all the same: a restart would not help.
      expect((await getText(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    aSecondLater();
    expect((await getText(`${server.url}/readyz`)).status).toBe(200);
  }, 15_000);

  it('many requests in one second run one write probe on the audio thread, answered from its result; a failed probe is still reported', async () => {
    // Counted where the probe writes: every write transaction on this connection (a separate one).
    const probed = new Database(join(dir, 'bot.sqlite3')) as unknown as Db;
    let probes = 0;
    let refuse = false;
    const transaction = probed.transaction.bind(probed);
    vi.spyOn(probed, 'transaction').mockImplementation((fn) => {
      probes++;
      if (!refuse) return transaction(fn);
      const fail = () => {
        throw Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' });
      };
      return Object.assign(fail, { immediate: fail, deferred: fail, exclusive: fail, default: fail }) as unknown as ReturnType<
        Db['transaction']
      >;
    });
    let now = 0;
    const deps = { client: { ws: { shards } }, db: probed } as unknown as BotHealthDeps;
    const local = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      endpoints: botEndpoints(new BotMetrics({ defaultMetrics: false }), botReadiness(deps, { now: () => now })),
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const burst = async (n: number) => Promise.all(Array.from({ length: n }, () => getText(`${local.url}/readyz`)));
      expect((await burst(20)).map((r) => r.status)).toEqual(Array(20).fill(200));
      now += 400;
      expect((await burst(20)).map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(probes).toBe(1);
      // The disk starts refusing writes: the next probe (a second after the last) says so, and
      // the answers after it repeat the failure until the next probe.
      refuse = true;
      now += 600;
      const failed = await burst(10);
      expect(failed.map((r) => r.status)).toEqual(Array(10).fill(503));
      expect(JSON.parse(failed[0]!.body)).toMatchObject({
        status: 'not_ready',
        checks: { database: { ok: false, detail: 'sqlite_readonly' } },
      });
      now += 999;
      expect((await burst(10)).map((r) => r.status)).toEqual(Array(10).fill(503));
      expect(probes).toBe(2);
      refuse = false;
      now += 1;
      expect((await burst(5)).map((r) => r.status)).toEqual(Array(5).fill(200));
      expect(probes).toBe(3);
    } finally {
      await local.close();
      probed.close();
    }
  });
});

describe('the server', () => {
  it('serves the Prometheus text format; refuses other methods; HEAD has no body', async () => {
    const m = await getText(`${server.url}/metrics`);
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.body).toContain('# TYPE yomiage_speech_messages_total counter');
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('a port already taken rejects with EADDRINUSE', async () => {
    const error = await startOpsServer({
      port: server.port,
      host: '127.0.0.1',
      endpoints: botEndpoints(
        new BotMetrics({ defaultMetrics: false }),
        botReadiness({ client: { ws: { shards } }, db } as unknown as BotHealthDeps),
      ),
      logger: createLogger({ level: 'silent' }),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('METRICS_PORT, METRICS_HOST, ERROR_WEBHOOK_URL', () => {
  const base = { DISCORD_TOKEN: 'a.b.c', TTS_TOKEN: 'x'.repeat(64) };
  it('off when unset; 127.0.0.1 unless METRICS_HOST says otherwise', () => {
    expect(loadConfig(base).ops).toEqual({ metricsPort: undefined, metricsHost: '127.0.0.1', errorWebhookUrl: undefined });
    expect(loadConfig({ ...base, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).ops).toMatchObject({
      metricsPort: 9464,
      metricsHost: '0.0.0.0',
    });
  });

  it('a bad port or webhook URL stops start-up naming the variable, never echoing the URL', () => {
    for (const [variable, bad] of [
      ['METRICS_PORT', 'http'],
      ['METRICS_PORT', '70000'],
      ['ERROR_WEBHOOK_URL', 'ftp://hooks.example/secret-part'],
    ] as const) {
      const error = (() => {
        try {
          loadConfig({ ...base, [variable]: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variables).toEqual([variable]);
      expect((error as Error).message).not.toContain('secret-part');
    }
  });
});

describe('yomiage_rate_window_used', () => {
  it('a shared store that does not answer leaves the gauge out; the rest of /metrics is served', async () => {
    const metrics = new BotMetrics({ defaultMetrics: false });
    let down = false;
    metrics.setSources({
      rateWindowUsed: async (kind) => {
        if (down) throw new Error('connection refused');
        return kind === 'standard' ? 7 : 1;
      },
    });
    const local = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      endpoints: botEndpoints(metrics, botReadiness({ client: { ws: { shards } }, db } as unknown as BotHealthDeps)),
      logger: createLogger({ level: 'silent' }),
    });
    try {
      expect((await getText(`${local.url}/metrics`)).body).toContain('yomiage_rate_window_used{endpoint="standard"} 7');
      down = true;
      const r = await getText(`${local.url}/metrics`);
      expect(r.status).toBe(200);
      expect(r.body).not.toMatch(/^yomiage_rate_window_used\{/m);
      expect(r.body).toContain('yomiage_speech_messages_total{outcome="spoken"} 0');
    } finally {
      await local.close();
    }
  });
});
