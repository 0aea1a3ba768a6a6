/**
 * Polls on members' messages, as Discord sends them on a message
 * (https://discord.com/developers/docs/resources/poll#poll-object): a question, answers numbered
 * from 1, an expiry, and results Discord counts. A poll ends (`endPoll`) with the votes a test
 * gives: its message is updated with the final counts (MESSAGE_UPDATE, `is_finalized`), and Discord
 * posts a poll result message in the channel (MESSAGE_CREATE, type 46, by the poll's author,
 * replying to the poll), whose `poll_result` embed names the question, the winner and the votes
 * (https://discord.com/developers/docs/resources/message#embed-fields-by-embed-type-poll-result-embed-fields).
 */
import type { APIMessage } from 'discord.js';
import { LocalDiscordError } from './errors.ts';
import { snowflake } from './fixtures.ts';
import { INTENTS } from './gateway.ts';
import type { DiscordState } from './state.ts';
import type { EndPollInput } from './types.ts';

/** What a member's poll says (the create request's fields the bot reads). */
export interface PollInput {
  question: string;
  answers: string[];
  /** Default 24, as Discord's. */
  durationHours?: number;
  allowMultiselect?: boolean;
}

/** The poll object on a message. */
export function toAPIPoll(poll: PollInput, now: number): Record<string, unknown> {
  return {
    question: { text: poll.question },
    answers: poll.answers.map((text, i) => ({ answer_id: i + 1, poll_media: { text } })),
    expiry: new Date(now + (poll.durationHours ?? 24) * 3_600_000).toISOString(),
    allow_multiselect: poll.allowMultiselect ?? false,
    layout_type: 1,
    results: { is_finalized: false, answer_counts: [] },
  };
}

/** Discord's message type of a poll result message. */
const POLL_RESULT_TYPE = 46;

interface StoredPoll {
  question: { text: string };
  answers: Array<{ answer_id: number; poll_media: { text?: string } }>;
  results: { is_finalized: boolean; answer_counts: Array<{ id: number; count: number; me_voted: boolean }> };
}

/** A member's message as the local Discord keeps it (sendMessage). */
type PollMessage = Omit<APIMessage, 'poll'> & { guild_id?: string; member?: object; poll?: StoredPoll };

/**
 * The poll of a member's message ends with `votes` (per answer, in order; none by default): the
 * poll message is updated with its final counts, then the poll result message is created.
 * Resolves the result message's id.
 */
export async function endPoll(state: DiscordState, input: EndPollInput): Promise<{ id: string }> {
  const message = state.userMessages.get(input.messageId) as PollMessage | undefined;
  const poll = message?.channel_id === input.channelId ? message.poll : undefined;
  if (!message || !poll || poll.results.is_finalized) {
    throw new LocalDiscordError('unknown_message', { message: `no open poll on message ${input.messageId} in channel ${input.channelId}` });
  }
  const votes = input.votes ?? [];
  if (votes.length > poll.answers.length || votes.some((v) => !Number.isInteger(v) || v < 0)) {
    throw new LocalDiscordError('bad_option', { message: `votes must be counts (whole, >= 0) for at most ${poll.answers.length} answers` });
  }
  const counts = poll.answers.map((a, i) => ({ id: a.answer_id, count: votes[i] ?? 0, me_voted: false }));
  poll.results = { is_finalized: true, answer_counts: counts.filter((c) => c.count > 0) };
  const guildId = message.guild_id;
  const where = { channel_id: input.channelId, ...(guildId ? { guild_id: guildId } : {}) };
  const contentFor = (session: { intents: number }) => (session.intents & INTENTS.MessageContent && state.messageContent) || !guildId;
  const intent = guildId ? INTENTS.GuildMessages : INTENTS.DirectMessages;
  await state.gateway.dispatch('MESSAGE_UPDATE', message, {
    intent,
    transform: (d, session) => (contentFor(session) ? d : { ...(d as object), content: '', poll: undefined }),
  });

  const total = counts.reduce((n, c) => n + c.count, 0);
  const most = Math.max(0, ...counts.map((c) => c.count));
  const leaders = counts.filter((c) => c.count === most);
  const winner = total > 0 && leaders.length === 1 ? poll.answers.find((a) => a.answer_id === leaders[0]!.id) : undefined;
  const field = (name: string, value: string | number) => ({ name, value: String(value), inline: false });
  const id = snowflake(state.now());
  const result: Record<string, unknown> = {
    id,
    type: POLL_RESULT_TYPE,
    ...where,
    author: message.author,
    ...(message.member ? { member: message.member } : {}),
    content: '',
    timestamp: new Date(state.now()).toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [message.author],
    mention_roles: [],
    attachments: [],
    embeds: [
      {
        type: 'poll_result',
        fields: [
          field('poll_question_text', poll.question.text),
          field('victor_answer_votes', most),
          field('total_votes', total),
          ...(winner ? [field('victor_answer_id', winner.answer_id)] : []),
          ...(winner?.poll_media.text ? [field('victor_answer_text', winner.poll_media.text)] : []),
        ],
      },
    ],
    components: [],
    pinned: false,
    flags: 0,
    message_reference: { type: 0, message_id: message.id, ...where },
  };
  state.userMessages.set(id, result as unknown as APIMessage);
  // The result's embed is message content: blanked without the intent, as a member's embeds are.
  await state.gateway.dispatch('MESSAGE_CREATE', result, {
    intent,
    transform: (d, session) => (contentFor(session) ? d : { ...(d as object), embeds: [] }),
  });
  return { id };
}
