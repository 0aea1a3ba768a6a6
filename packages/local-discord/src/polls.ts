/**
 * Polls on members' messages, as Discord sends them on a message
 * (https://discord.com/developers/docs/resources/poll#poll-object): a question, answers numbered
 * from 1, an expiry, and results Discord counts (none yet here).
 */

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
