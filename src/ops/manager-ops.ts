import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Check, OpsEndpoints, Readiness } from './ops-server.ts';

// With SHARD_PROCESSES > 1 the shard manager serves METRICS_PORT. It asks every bot
// process for its metrics over IPC (collect('metrics'), src/ops/shard-ipc.ts) and serves their
// aggregate: counters and histograms summed, yomiage_rate_window_used by max (each process reads
// the same shared window), as each metric's `aggregator` says (src/ops/metrics.ts).

/** The part of ShardProcessManager the endpoints use. */
interface CollectingManager {
  collect<T>(topic: string, timeoutMs?: number): Promise<Array<{ process: number; shards: number[]; value: T }>>;
  pids(): Array<number | undefined>;
}

/** The topics bot processes answer for the manager (registered in src/main.ts). */
export const COLLECT_TOPICS = { metrics: 'metrics', ready: 'ready' } as const;

/** The manager's /metrics (the sum over its processes) and /readyz (every process ready). */
export function managerEndpoints(manager: CollectingManager, options: { timeoutMs?: number } = {}): OpsEndpoints {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return {
    async metrics() {
      const answers = await manager.collect<Array<MetricObjectWithValues<MetricValue<string>>>>(COLLECT_TOPICS.metrics, timeoutMs);
      const registry = AggregatorRegistry.aggregate(answers.map((a) => a.value));
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    async readiness(): Promise<Readiness> {
      const answers = await manager.collect<Readiness>(COLLECT_TOPICS.ready, timeoutMs);
      const checks: Record<string, Check> = {};
      const degraded = new Set<string>();
      manager.pids().forEach((pid, index) => {
        const answer = answers.find((a) => a.process === index)?.value;
        if (!answer) checks[`process_${index}`] = { ok: false, detail: pid === undefined ? 'not_running' : 'no_answer' };
        else {
          // What makes it unready (a part a process reports as degraded does not).
          const failing = Object.entries(answer.checks)
            .filter(([name, c]) => !c.ok && !answer.degraded.includes(name))
            .map(([name, c]) => `${name}:${c.detail ?? 'failed'}`);
          checks[`process_${index}`] = answer.ready ? { ok: true } : { ok: false, detail: failing.join(' ') || 'not_ready' };
          for (const d of answer.degraded) degraded.add(d);
        }
      });
      return { ready: Object.values(checks).length > 0 && Object.values(checks).every((c) => c.ok), degraded: [...degraded], checks };
    },
  };
}
