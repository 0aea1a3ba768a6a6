import type { Clock } from '../../util/clock.ts';
import { SpeechError } from '../errors.ts';
import type { ReadyUtterance, Sink } from './utterance.ts';

/**
 * Runs one delivery under a watchdog, so a sink that never settles cannot stall its guild silently
 * (a known failure of existing read-aloud bots): after the audio's length plus `timeoutMs` its signal is aborted,
 * and after `timeoutMs` more the delivery is abandoned. Resolves when the sink settled (a throw or
 * a rejection is passed to `onFailed`) or was abandoned (`onAbandoned`); never rejects.
 */
export async function runSink(
  sink: Sink,
  ready: ReadyUtterance,
  options: { controller: AbortController; clock: Clock; timeoutMs: number; onFailed: (error: unknown) => void; onAbandoned: () => void },
): Promise<void> {
  const { controller, clock, timeoutMs } = options;
  const watchdog = new AbortController();
  const abandoned = clock
    .sleep((ready.audio?.durationMs ?? 0) + timeoutMs, watchdog.signal)
    .then(() => {
      controller.abort(new SpeechError('aborted', { guildId: ready.guildId, message: 'sink timed out' }));
      return clock.sleep(timeoutMs, watchdog.signal);
    })
    .then(options.onAbandoned)
    .catch(() => {});
  let settled: Promise<void>;
  try {
    settled = Promise.resolve(sink(ready, controller.signal));
  } catch (err) {
    settled = Promise.reject(err);
  }
  await Promise.race([settled.catch(options.onFailed), abandoned]);
  watchdog.abort();
}
