import type { RateGrant } from '../../tts/limiter/limiter.ts';

// The rate grants a batch spends, and their one owner.

/**
 * The rate grants a batch holds, and their one owner: each request is handed one (`hand`), and
 * every grant no request used is given back in one place (`#giveBack`): when its request settles
 * (`done`: a cache hit, a shared call, a refusal before sending), or when the batch needs no more
 * (`settle`). A grant a request spent stays spent (its `release` is then a no-op).
 */
export class Grants {
  #held: RateGrant[] = [];

  add(grant: RateGrant): void {
    this.#held.push(grant);
  }

  get count(): number {
    return this.#held.length;
  }

  /** The next grant for a request (undefined: none left; the request waits for its own). */
  hand(): RateGrant | undefined {
    return this.#held.shift();
  }

  /** A request that was handed `grant` settled, or will not spend it: unused, it goes back to the window (once). */
  done(grant: RateGrant | undefined): void {
    if (grant) this.#giveBack(grant);
  }

  /** Keeps the first `keep` grants, gives the rest back (all of them by default). */
  settle(keep = 0): void {
    for (const grant of this.#held.splice(keep)) this.#giveBack(grant);
  }

  #giveBack(grant: RateGrant): void {
    grant.release();
  }
}

/** The batch's grants as its requests see them (grants.ts `Grants`, their one owner). */
export interface HandsGrants {
  hand(): RateGrant | undefined;
  done(grant: RateGrant | undefined): void;
}
