import { MessageType, type Message } from 'discord.js';

// Whether message content reaches the bot. Discord blanks the fields the Message Content intent
// guards (content, embeds, attachments, components, polls, forwarded snapshots) for an application
// it does not grant that intent (https://discord.com/developers/docs/events/gateway#message-content-intent),
// and the bot then reads nothing. A member cannot send an empty message: every message of theirs
// has text, a file, an embed, a poll, a sticker or a forwarded message. So a member's plain message
// (or reply) with all of those empty and no sticker can only have been blanked; any of them present
// proves the content arrives. A sticker alone says nothing either way; nor does a message that
// mentions the bot (Discord sends those whole), a bot's or a webhook's (a deferred reply is empty),
// or a system message, but for a poll's result: Discord's message when a poll ends always carries
// its result as an embed, so one without is blanked.

/** What one message says about message content: it arrives, it was blanked, or nothing. */
type ContentEvidence = 'text' | 'blanked' | 'none';

/** The parts of a message the rule looks at (plain data: tested without Discord). */
export interface MessageShape {
  /** Written by a member (not a bot, a webhook or Discord itself) as a plain message or a reply. */
  byMember: boolean;
  /** The bot is mentioned: Discord sends the content whatever the intent. */
  mentionsBot: boolean;
  content: string;
  attachments: number;
  embeds: number;
  components: number;
  poll: boolean;
  /** Discord's message when a poll ends (type 46), whose result is an embed. */
  pollResult?: boolean;
  stickers: number;
  /** Forwarded messages' own parts. */
  snapshots: ReadonlyArray<{ content: string; attachments: number; embeds: number; stickers: number }>;
}

/** What `m` proves about message content reaching the bot. */
export function contentEvidence(m: MessageShape): ContentEvidence {
  if (m.mentionsBot) return 'none';
  if (m.pollResult) return m.embeds > 0 ? 'text' : 'blanked';
  if (!m.byMember) return 'none';
  const snapshotText = m.snapshots.some((s) => s.content !== '' || s.attachments > 0 || s.embeds > 0);
  if (m.content !== '' || m.attachments > 0 || m.embeds > 0 || m.components > 0 || m.poll || snapshotText) return 'text';
  const stickers = m.stickers + m.snapshots.reduce((n, s) => n + s.stickers, 0);
  return stickers > 0 ? 'none' : 'blanked';
}

/** A discord.js message as the rule sees it. */
export function shapeOf(message: Message): MessageShape {
  const member = !message.author.bot && !message.webhookId && !message.system;
  return {
    byMember: member && (message.type === MessageType.Default || message.type === MessageType.Reply),
    mentionsBot: message.mentions.users.has(message.client.user.id),
    content: message.content,
    attachments: message.attachments.size,
    embeds: message.embeds.length,
    components: message.components.length,
    poll: message.poll !== null,
    pollResult: message.type === MessageType.PollResult,
    stickers: message.stickers.size,
    snapshots: [...message.messageSnapshots.values()].map((s) => ({
      content: s.content,
      attachments: s.attachments.size,
      embeds: s.embeds.length,
      stickers: s.stickers.size,
    })),
  };
}

/** Whether message content arrives, as the messages seen so far say. */
export type ContentVerdict =
  /** The latest evidence was a message with content, at `lastAt`. */
  | { state: 'arriving'; lastAt: number }
  /** The latest evidence was blanked: `blanked` messages since `since` (the first blank one after content was last seen). */
  | { state: 'missing'; since: number; blanked: number }
  /** No evidence yet (no member's message seen since start). */
  | { state: 'unknown' };

/**
 * The process's view of message content, from every member's message that arrives and from the
 * messages members point at (Apps > a message command: Discord sends its target with the text,
 * so one that arrived blank proves the content is withheld).
 */
export class MessageContentWatch {
  #verdict: ContentVerdict = { state: 'unknown' };

  /** A message arrived; returns what it proved. */
  saw(message: Message, at: number): ContentEvidence {
    const evidence = contentEvidence(shapeOf(message));
    this.note(evidence, at);
    return evidence;
  }

  /** Evidence from elsewhere: a message known to have text arrived blank ('blanked'), or one arrived with text. */
  note(evidence: ContentEvidence, at: number): void {
    if (evidence === 'text') this.#verdict = { state: 'arriving', lastAt: at };
    else if (evidence === 'blanked')
      this.#verdict =
        this.#verdict.state === 'missing'
          ? { ...this.#verdict, blanked: this.#verdict.blanked + 1 }
          : { state: 'missing', since: at, blanked: 1 };
  }

  verdict(): ContentVerdict {
    return this.#verdict;
  }
}
