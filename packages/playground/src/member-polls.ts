/**
 * Polls members make on the page, as Discord's poll UI makes them
 * (https://discord.com/developers/docs/resources/poll): a question and up to 10 answers, a duration
 * from the UI's list, one answer or several per member. Members vote by clicking an answer (again
 * to take the vote back); Discord keeps the votes, so the playground does here. The poll ends when
 * its time is up or when its author ends it early (Discord lets only the author): the local Discord
 * then posts Discord's poll result message, which the bot reads, and the page shows it.
 */
import type { FakeDiscord, FakeUser } from '@yomiage/local-discord';
import { PageRequestError } from './errors.ts';
import type { MemberItem, PollResultView, PollView } from './views.ts';

/** Discord's limits on a poll (the create request). */
const POLL_LIMITS = { questionChars: 300, answerChars: 55, answers: 10 } as const;
/** The durations Discord's poll UI offers, in hours (1 hour to 2 weeks). */
const POLL_DURATIONS_HOURS = [1, 4, 8, 24, 72, 168, 336] as const;

type Body = Record<string, unknown>;
type PollItem = MemberItem & { poll: PollView };

interface PollDeskOptions {
  guildId: string;
  discord: FakeDiscord;
  /** Records a new timeline item and pushes it to the pages. */
  add(item: MemberItem): void;
  /** Pushes a changed item to the pages. */
  changed(item: MemberItem): void;
}

export class PollDesk {
  readonly #options: PollDeskOptions;
  /** Each open poll's end, when its time is up. */
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(options: PollDeskOptions) {
    this.#options = options;
  }

  /** `author` posts a poll in `channelId`; refused before anything is sent when it breaks Discord's limits. */
  async create(author: FakeUser, channelId: string, body: Body): Promise<MemberItem> {
    const question = typeof body.question === 'string' ? body.question.trim() : '';
    const answers = Array.isArray(body.answers) ? body.answers.map((a) => (typeof a === 'string' ? a.trim() : '')).filter(Boolean) : [];
    const hours = body.durationHours ?? 24;
    const chars = (text: string) => [...text].length;
    if (!question) throw bad('a poll needs a question');
    if (chars(question) > POLL_LIMITS.questionChars) throw bad(`a poll's question is at most ${POLL_LIMITS.questionChars} characters`);
    if (answers.length === 0 || answers.length > POLL_LIMITS.answers) throw bad(`a poll has 1 to ${POLL_LIMITS.answers} answers`);
    if (answers.some((a) => chars(a) > POLL_LIMITS.answerChars)) throw bad(`an answer is at most ${POLL_LIMITS.answerChars} characters`);
    if (!(POLL_DURATIONS_HOURS as readonly unknown[]).includes(hours))
      throw bad(`a poll lasts one of ${POLL_DURATIONS_HOURS.join(', ')} hours`);
    const durationHours = hours as number;
    const allowMultiselect = body.allowMultiselect === true;
    const { guildId, discord } = this.#options;
    const { id } = await discord.sendMessage({
      guildId,
      channelId,
      author,
      content: '',
      poll: { question, answers, durationHours, allowMultiselect },
    });
    const item: PollItem = {
      type: 'member',
      id,
      channelId,
      authorId: author.id,
      content: '',
      at: Date.now(),
      reactions: [],
      deleted: false,
      poll: {
        question,
        answers: answers.map((text, i) => ({ id: i + 1, text, voters: [] })),
        allowMultiselect,
        expiresAt: Date.now() + durationHours * 3_600_000,
        ended: false,
      },
    };
    this.#options.add(item);
    // Its time is up: Discord ends it with the votes cast (unref: a poll left open never keeps the playground running).
    const timer = setTimeout(() => void this.end(item).catch(() => {}), durationHours * 3_600_000);
    timer.unref();
    this.#timers.set(id, timer);
    return item;
  }

  /** `userId` clicks `answerId`: votes for it (one answer replaces another unless several are allowed), or takes the vote back. */
  vote(item: MemberItem, userId: string, answerId: unknown): void {
    const poll = openPoll(item);
    const answer = poll.answers.find((a) => a.id === answerId);
    if (!answer) throw bad(`no answer ${String(answerId)} in this poll`);
    if (answer.voters.includes(userId)) answer.voters = answer.voters.filter((v) => v !== userId);
    else {
      if (!poll.allowMultiselect) for (const other of poll.answers) other.voters = other.voters.filter((v) => v !== userId);
      answer.voters.push(userId);
    }
    this.#options.changed(item);
  }

  /** `userId` ends the poll now: only its author may (as in Discord). */
  async endEarly(item: MemberItem, userId: string): Promise<MemberItem> {
    openPoll(item);
    if (item.authorId !== userId) throw new PageRequestError('forbidden', { message: "only the poll's author can end it early" });
    return this.end(item);
  }

  /** Ends the poll with the votes cast: the local Discord updates it and posts the result message, shown as a timeline item. */
  async end(item: MemberItem): Promise<MemberItem> {
    const poll = openPoll(item);
    clearTimeout(this.#timers.get(item.id));
    this.#timers.delete(item.id);
    const votes = poll.answers.map((a) => a.voters.length);
    // Ended before the wait: a second click while the local Discord answers finds it ended.
    poll.ended = true;
    let id: string;
    try {
      ({ id } = await this.#options.discord.endPoll({ channelId: item.channelId, messageId: item.id, votes }));
    } catch (error) {
      poll.ended = false;
      throw error;
    }
    this.#options.changed(item);
    const result: MemberItem = {
      type: 'member',
      id,
      channelId: item.channelId,
      authorId: item.authorId,
      content: '',
      at: Date.now(),
      reactions: [],
      deleted: false,
      pollResult: resultOf(item.id, poll.question, poll.answers),
    };
    this.#options.add(result);
    return result;
  }

  close(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}

/** The winner and the votes, by Discord's rule: the one answer with the most votes, none on a tie or without votes. */
function resultOf(pollId: string, question: string, answers: PollView['answers']): PollResultView {
  const counts = answers.map((a) => a.voters.length);
  const totalVotes = counts.reduce((n, c) => n + c, 0);
  const winnerVotes = Math.max(0, ...counts);
  const leaders = answers.filter((a) => a.voters.length === winnerVotes);
  const winner = totalVotes > 0 && leaders.length === 1 ? leaders[0]!.text : undefined;
  return { pollId, question, ...(winner !== undefined ? { winner } : {}), winnerVotes, totalVotes };
}

function openPoll(item: MemberItem): PollView {
  if (!item.poll || item.deleted) throw bad('no such poll');
  if (item.poll.ended) throw bad('this poll has ended');
  return item.poll;
}

function bad(message: string): PageRequestError {
  return new PageRequestError('bad_request', { message });
}
