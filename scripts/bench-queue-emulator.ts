/**
 * bench:queue's emulator, in a worker thread of its own: the service's work (the MP3 encode, about
 * 20 ms a request) then costs neither the bot side's event loop nor its CPU figure (`cpu_s` is the
 * main thread's CPU, process.threadCpuUsage), as with a remote service. Each mode starts a fresh
 * one, so no mode plays audio the emulator built for the other (it keeps each MP3 across reset()).
 *
 * Both threads run the same scaled clock: `now()` is computed from one shared origin, so the rate
 * window and `reset_in` agree with the bot side's limiter.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { RequestLogEntry } from '@yomiage/tts-emulator';
import type { Clock } from '../src/util/clock.ts';
import { sleep } from '../src/util/clock.ts';

/** A clock running `factor` times the wall clock from `origin` (wall ms): the same in every thread given the same origin. */
export function sharedScaledClock(factor: number, origin: number): Clock {
  return { now: () => origin + (Date.now() - origin) * factor, sleep: (ms, signal) => sleep(ms / factor, signal) };
}

export interface WorkerEmulator {
  baseUrl: string;
  /** The emulator's request log (standard and advanced calls and their status). */
  requests(): Promise<RequestLogEntry[]>;
  /** Characters charged to `token` since start. */
  charged(token: string): Promise<number>;
  close(): Promise<void>;
}

interface Setup {
  factor: number;
  origin: number;
  token: string;
  rate: { standard: { limit: number; windowMs: number }; advanced: { limit: number; windowMs: number } };
  synthesisDelayMs: number;
}

type Ask = { id: number; op: 'requests' | 'charged' | 'close'; token?: string | undefined };

export async function startWorkerEmulator(setup: Setup): Promise<WorkerEmulator> {
  const worker = new Worker(new URL(import.meta.url), { workerData: setup });
  const pending = new Map<number, (v: unknown) => void>();
  let next = 0;
  const baseUrl = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { baseUrl: string }) => resolve(m.baseUrl));
  });
  worker.on('message', (m: { id: number; value: unknown }) => pending.get(m.id)?.(m.value));
  const ask = <T>(op: Ask['op'], token?: string) =>
    new Promise<T>((resolve) => {
      const id = next++;
      pending.set(id, (v) => {
        pending.delete(id);
        resolve(v as T);
      });
      worker.postMessage({ id, op, token } satisfies Ask);
    });
  return {
    baseUrl,
    requests: () => ask<RequestLogEntry[]>('requests'),
    charged: (token) => ask<number>('charged', token),
    close: async () => {
      await ask('close');
      await worker.terminate();
    },
  };
}

if (!isMainThread) {
  const { startEmulator, PLAN_ALLOWANCE } = await import('@yomiage/tts-emulator');
  const setup = workerData as Setup;
  const clock = sharedScaledClock(setup.factor, setup.origin);
  const emulator = await startEmulator({
    control: true,
    now: () => clock.now(),
    sleep: (ms) => clock.sleep(ms),
    rate: setup.rate,
    // A paid account: the traces outlast a free account's 5,000 characters.
    accounts: [{ token: setup.token, plan: 'paid', allowance: PLAN_ALLOWANCE.paid }],
    synthesisDelayMs: setup.synthesisDelayMs,
  });
  parentPort!.on('message', async (m: Ask) => {
    if (m.op === 'requests') parentPort!.postMessage({ id: m.id, value: emulator.requests() });
    else if (m.op === 'charged') parentPort!.postMessage({ id: m.id, value: emulator.charged(m.token!) });
    else {
      await emulator.close();
      parentPort!.postMessage({ id: m.id, value: null });
    }
  });
  parentPort!.postMessage({ baseUrl: emulator.baseUrl });
}
