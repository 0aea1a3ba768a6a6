import { describe, expect, it } from 'vitest';
import { batchGroup, grantWorth, POLICY_DEFAULTS } from '../../src/speech/queue/policy.ts';
import { NOW, RULES, u } from '../support/batching.ts';

// The scheduler's policy under scarce requests as pure rules: which of an audience's waiting messages
// its next request reads (grouped by voice while requests are scarce), and what a grant buys it.

const ago = (ms: number) => NOW - ms;
const OWN = 'ja-JP-NanamiNeural';
/** 20 s horizon, 40 s cut (two horizons: requests scarce, the channel talking), a late line worth 0.15. */
const SCARCE = { horizonMs: 20_000, cutMs: 40_000, staleWorth: POLICY_DEFAULTS.staleWorthTalking, grouped: true };
const texts = (xs: readonly { text: string }[] | undefined) => xs?.map((x) => x.text);

describe('batchGroup', () => {
  it('GIVEN requests not scarce THEN the run at the head, in order: another voice ends it', () => {
    const pending = [u('あ'), u('い', { voice: OWN }), u('う')];
    const group = batchGroup(pending, NOW, 100, { ...SCARCE, grouped: false }, RULES);
    expect(texts(group?.items)).toEqual(['あ']);
  });

  it('GIVEN requests scarce and a member with a voice of their own between two lines THEN one request reads both lines of the server voice', () => {
    const pending = [
      u('あ', { enqueuedAt: ago(6_000) }),
      u('い', { voice: OWN, enqueuedAt: ago(4_000) }),
      u('う', { enqueuedAt: ago(2_000) }),
    ];
    const group = batchGroup(pending, NOW, 100, SCARCE, RULES);
    expect(texts(group?.items)).toEqual(['あ', 'う']);
    expect(group?.gain).toBe(2);
  });

  it('GIVEN two voices waiting THEN the voice whose request hears more fresh speech goes; between equals the oldest', () => {
    const fewer = [
      u('あ', { enqueuedAt: ago(9_000) }),
      u('い', { voice: OWN, enqueuedAt: ago(8_000) }),
      u('う', { voice: OWN, enqueuedAt: ago(7_000) }),
    ];
    expect(texts(batchGroup(fewer, NOW, 100, SCARCE, RULES)?.items)).toEqual(['い', 'う']);
    const equal = [u('あ', { enqueuedAt: ago(9_000) }), u('い', { voice: OWN, enqueuedAt: ago(8_000) })];
    expect(texts(batchGroup(equal, NOW, 100, SCARCE, RULES)?.items)).toEqual(['あ']);
  });

  it('GIVEN a voice whose lines would be heard past the horizon THEN a fresher voice goes first, however many lines the other has', () => {
    // Three lines 25 s old (within the cut, past the horizon: 0.15 each) against one fresh line.
    const pending = [...['あ', 'い', 'う'].map((t) => u(t, { enqueuedAt: ago(25_000) })), u('え', { voice: OWN, enqueuedAt: ago(1_000) })];
    const group = batchGroup(pending, NOW, 100, SCARCE, RULES);
    expect(texts(group?.items)).toEqual(['え']);
    expect(group?.gain).toBe(1);
  });

  it('GIVEN a line written long after the oldest waiting THEN it is not read ahead of it (the window of reading ahead)', () => {
    const pending = [
      u('あ', { enqueuedAt: ago(30_000) }),
      u('い', { voice: OWN, enqueuedAt: ago(29_000) }),
      u('う', { enqueuedAt: ago(1_000) }),
    ];
    const window = { groupWindowMs: 10_000 };
    expect(texts(batchGroup(pending, NOW, 100, SCARCE, RULES, window)?.members)).toEqual(['あ']);
    expect(texts(batchGroup(pending, NOW, 100, SCARCE, RULES)?.members)).toEqual(['あ', 'う']);
  });

  it('GIVEN more than one request of a voice waiting THEN the oldest that fit one request: at most five lines, and past the cut nothing', () => {
    const seven = Array.from({ length: 7 }, (_, i) => u(`${i}`, { enqueuedAt: ago(7_000 - i * 1_000) }));
    expect(texts(batchGroup(seven, NOW, 100, SCARCE, RULES)?.items)).toEqual(['0', '1', '2', '3', '4']);
    const past = [u('あ', { enqueuedAt: ago(45_000) }), u('い', { enqueuedAt: ago(45_000) })];
    expect(batchGroup(past, NOW, 100, SCARCE, RULES)).toBeNull();
  });

  it('GIVEN an explicit request at the head THEN it goes alone first, never grouped behind auto-read', () => {
    const pending = [u('読んで', { kind: 'say' }), u('あ'), u('い')];
    expect(texts(batchGroup(pending, NOW, 100, SCARCE, RULES)?.items)).toEqual(['読んで']);
  });
});

describe('grantWorth', () => {
  const fresh = (n: number) => Array.from({ length: n }, (_, i) => u(`${i}`));
  const read = (spokenLately: number, offeredLately: number) => ({ ...SCARCE, spokenLately, offeredLately });

  it('GIVEN an audience that read all it was offered lately THEN a grant is worth the fresh lines it buys', () => {
    expect(grantWorth(fresh(3), NOW, 100, read(10, 10), RULES)).toBeCloseTo(3);
  });

  it('GIVEN audiences that read less of what they were offered THEN their grant is worth more, the one that read nothing the most', () => {
    const all = grantWorth(fresh(2), NOW, 100, read(10, 10), RULES);
    const half = grantWorth(fresh(2), NOW, 100, read(5, 10), RULES);
    const none = grantWorth(fresh(1), NOW, 100, read(0, 1), RULES);
    expect(half).toBeGreaterThan(all);
    expect(none).toBeGreaterThan(half);
  });

  it('GIVEN two audiences that each read five lines lately THEN the one offered twenty is worth more than the one offered five (shares, not counts)', () => {
    expect(grantWorth(fresh(2), NOW, 100, read(5, 20), RULES)).toBeGreaterThan(grantWorth(fresh(2), NOW, 100, read(5, 5), RULES));
  });

  it("GIVEN a quiet server's one fresh line and a busy server's full request THEN the quiet one is worth more; read alike, the fuller request", () => {
    const quiet = grantWorth(fresh(1), NOW, 100, read(0, 1), RULES);
    const busy = grantWorth(fresh(5), NOW, 100, read(12, 15), RULES);
    expect(quiet).toBeGreaterThan(busy);
    expect(grantWorth(fresh(5), NOW, 100, read(0, 5), RULES)).toBeGreaterThan(quiet);
  });

  it('GIVEN nothing that could still be heard within the cut THEN a grant buys nothing', () => {
    expect(grantWorth([u('あ', { enqueuedAt: ago(45_000) })], NOW, 100, read(0, 1), RULES)).toBe(0);
  });
});
