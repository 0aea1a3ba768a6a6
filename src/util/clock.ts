/** Time as a collaborator, so retries, polling and windows can be tested with a fast clock. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Sleeps for `ms`, rejecting with the signal's reason if it is aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now(), sleep };

/**
 * A clock whose time runs `factor` times faster than the wall clock (factor 100: a 60 s wait takes
 * 0.6 s). Both `now()` and `sleep()` are scaled, so code under test sees consistent time.
 */
export function scaledClock(factor: number, start = Date.now()): Clock {
  const base = Date.now();
  return {
    now: () => start + (Date.now() - base) * factor,
    sleep: (ms, signal) => sleep(ms / factor, signal),
  };
}
