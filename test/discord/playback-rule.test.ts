import { describe, expect, it } from 'vitest';
import { decideControl, type ControlFacts, type JoinTarget } from '../../src/discord/voice-control/playback-rule.ts';

// Who may move, stop, skip or clear the bot, as one pure rule (GIVEN/THEN).
const BOT_VC = 'vc-bot';
const OTHER_VC = 'vc-other';
const facts = (over: Partial<ControlFacts> = {}): ControlFacts => ({
  canMoveMembers: false,
  memberChannelId: null,
  botChannelId: BOT_VC,
  othersListening: 0,
  ...over,
});
const target = (over: Partial<JoinTarget> = {}): JoinTarget => ({
  channelId: OTHER_VC,
  memberCanConnect: true,
  memberCanMoveMembers: false,
  botCanConnect: true,
  botCanSpeak: true,
  botCanMoveMembers: false,
  full: false,
  ...over,
});
const refused = (reason: string, channelId: string | null) => ({ allowed: false, reason, channelId });
const ALLOWED = { allowed: true };

describe('GIVEN /leave, /skip or /clear', () => {
  it('THEN a member in the bot voice channel may, with others listening too', () => {
    expect(decideControl(facts({ memberChannelId: BOT_VC, othersListening: 3 }))).toEqual(ALLOWED);
  });
  it('THEN a member in no voice channel, or in another one, is refused naming the bot channel', () => {
    expect(decideControl(facts())).toEqual(refused('playback.not_in_channel', BOT_VC));
    expect(decideControl(facts({ memberChannelId: OTHER_VC }))).toEqual(refused('playback.not_in_channel', BOT_VC));
  });
  it('THEN a member with Move Members may from anywhere', () => {
    expect(decideControl(facts({ canMoveMembers: true }))).toEqual(ALLOWED);
    expect(decideControl(facts({ canMoveMembers: true, memberChannelId: OTHER_VC, othersListening: 2 }))).toEqual(ALLOWED);
  });
  it('THEN while the bot is in no voice channel, only Move Members may (being in "its" channel means nothing)', () => {
    expect(decideControl(facts({ botChannelId: null }))).toEqual(refused('playback.not_in_channel', null));
    expect(decideControl(facts({ botChannelId: null, canMoveMembers: true }))).toEqual(ALLOWED);
  });
});

describe('GIVEN /join while the bot is in no voice channel', () => {
  const idle = (over: Partial<ControlFacts> = {}) => facts({ botChannelId: null, ...over });
  it('THEN a member in the target channel may bring it there', () => {
    expect(decideControl(idle({ memberChannelId: OTHER_VC }), target())).toEqual(ALLOWED);
  });
  it('THEN a member elsewhere without Move Members is told they are not in that channel', () => {
    expect(decideControl(idle(), target())).toEqual(refused('playback.not_in_target', OTHER_VC));
    expect(decideControl(idle({ memberChannelId: BOT_VC }), target())).toEqual(refused('playback.not_in_target', OTHER_VC));
  });
  it('THEN a member with Move Members there may send it to a channel they can connect to, and only to one', () => {
    expect(decideControl(idle(), target({ memberCanMoveMembers: true }))).toEqual(ALLOWED);
    const cannot = decideControl(idle(), target({ memberCanMoveMembers: true, memberCanConnect: false }));
    expect(cannot).toEqual(refused('playback.member_cannot_connect', OTHER_VC));
  });
  it('THEN Move Members only where the command was typed (or in the bot channel) does not send it to a channel they are not in', () => {
    expect(decideControl(idle({ canMoveMembers: true }), target())).toEqual(refused('playback.not_in_target', OTHER_VC));
  });
  it('THEN a member in the channel need not be able to connect to it again (they are there)', () => {
    expect(decideControl(idle({ memberChannelId: OTHER_VC }), target({ memberCanConnect: false }))).toEqual(ALLOWED);
  });
});

describe('GIVEN /join to a channel the bot may not use', () => {
  const there = facts({ botChannelId: null, memberChannelId: OTHER_VC });
  it('THEN without View Channel or Connect for the bot: refused, saying it cannot connect', () => {
    expect(decideControl(there, target({ botCanConnect: false }))).toEqual(refused('playback.bot_cannot_connect', OTHER_VC));
    const mover = facts({ canMoveMembers: true });
    expect(decideControl(mover, target({ memberCanMoveMembers: true, botCanConnect: false }))).toEqual(
      refused('playback.bot_cannot_connect', OTHER_VC),
    );
  });
  it('THEN without Speak for the bot: refused, saying it cannot speak', () => {
    expect(decideControl(there, target({ botCanSpeak: false }))).toEqual(refused('playback.bot_cannot_speak', OTHER_VC));
  });
  it('THEN in a stage where the bot may neither ask to speak nor become a speaker: refused, naming those permissions', () => {
    expect(decideControl(there, target({ botCanSpeak: false, stage: true }))).toEqual(refused('playback.bot_cannot_speak_stage', OTHER_VC));
  });
  it('THEN a full channel is refused, unless the bot has Move Members there', () => {
    expect(decideControl(there, target({ full: true }))).toEqual(refused('playback.channel_full', OTHER_VC));
    expect(decideControl(there, target({ full: true, botCanMoveMembers: true }))).toEqual(ALLOWED);
  });
  it('THEN the channel the bot is already in counts as having room (the bot is one of its members)', () => {
    expect(decideControl(facts({ memberChannelId: BOT_VC }), target({ channelId: BOT_VC, full: true }))).toEqual(ALLOWED);
  });
});

describe('GIVEN /join while the bot is in another voice channel', () => {
  it('THEN nobody else listening there: a member in the target may move it', () => {
    expect(decideControl(facts({ memberChannelId: OTHER_VC }), target())).toEqual(ALLOWED);
  });
  it('THEN humans listening there: a member without Move Members is refused, naming the channel they listen in', () => {
    const dragging = facts({ memberChannelId: OTHER_VC, othersListening: 1 });
    expect(decideControl(dragging, target())).toEqual(refused('playback.listeners', BOT_VC));
  });
  it('THEN humans listening there: a member with Move Members there may move it, from anywhere they could connect to', () => {
    expect(decideControl(facts({ memberChannelId: OTHER_VC, othersListening: 4, canMoveMembers: true }), target())).toEqual(ALLOWED);
    expect(decideControl(facts({ othersListening: 4, canMoveMembers: true }), target({ memberCanMoveMembers: true }))).toEqual(ALLOWED);
  });
  it('THEN humans listening there: Move Members only in the target does not take it away from them', () => {
    const dragging = facts({ memberChannelId: OTHER_VC, othersListening: 1 });
    expect(decideControl(dragging, target({ memberCanMoveMembers: true }))).toEqual(refused('playback.listeners', BOT_VC));
  });
  it('THEN /join to the channel it is in (a new text channel) is not a move: listeners do not matter', () => {
    expect(decideControl(facts({ memberChannelId: BOT_VC, othersListening: 2 }), target({ channelId: BOT_VC }))).toEqual(ALLOWED);
  });
  it('THEN the member is checked before the listeners, and the bot permissions before the listeners', () => {
    expect(decideControl(facts({ othersListening: 1 }), target())).toEqual(refused('playback.not_in_target', OTHER_VC));
    const dragging = facts({ memberChannelId: OTHER_VC, othersListening: 1 });
    expect(decideControl(dragging, target({ botCanSpeak: false }))).toEqual(refused('playback.bot_cannot_speak', OTHER_VC));
  });
});
