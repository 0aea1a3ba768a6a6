import { randomBytes } from 'node:crypto';
import { ButtonStyle, ComponentType, type APIActionRowComponent, type APIButtonComponent, type ButtonInteraction } from 'discord.js';
import type { Logger } from '../../util/log.ts';
import { UserError } from '../../i18n/errors.ts';

// Questions the bot asks with buttons (/narrate's cost, a dictionary import's summary).
// The question lives in this process's memory until one click answers it or it times out: a
// restart forgets it, and a later click is told it expired (nothing is done twice, nothing by guess).

/** One question waiting for its member's click. */
interface ButtonQuestion<C extends string> {
  /** Only this member may answer (others are told so; the question stays open). */
  userId: string;
  choices: readonly C[];
  /** Runs once, with the clicked choice; it answers `interaction`. */
  answer(choice: C, interaction: ButtonInteraction): Promise<void>;
  /** Nobody answered in time: say so where the question was asked. */
  expire(): Promise<void>;
}

const PREFIX = 'q13';

const BUTTON_DEFAULTS = { timeoutMs: 120_000 } as const;

/** Open questions by id, each answered at most once. */
export class ButtonQuestions {
  readonly #open = new Map<string, { question: ButtonQuestion<string>; timer: NodeJS.Timeout }>();
  readonly #timeoutMs: number;
  readonly #logger: Logger;

  constructor(options: { logger: Logger; timeoutMs?: number | undefined }) {
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs ?? BUTTON_DEFAULTS.timeoutMs;
  }

  /** How long a question waits for its click. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** Opens a question; returns one button row, a button per choice with these labels and styles. */
  ask<C extends string>(
    question: ButtonQuestion<C>,
    buttons: Record<C, { label: string; danger?: boolean; primary?: boolean }>,
  ): APIActionRowComponent<APIButtonComponent> {
    const id = randomBytes(9).toString('base64url');
    const timer = setTimeout(() => {
      if (!this.#open.delete(id)) return;
      question.expire().catch((error: unknown) => this.#logger.warn({ err: error }, 'could not tell a member their question expired'));
    }, this.#timeoutMs);
    timer.unref();
    this.#open.set(id, { question: question as unknown as ButtonQuestion<string>, timer });
    return {
      type: ComponentType.ActionRow,
      components: question.choices.map((choice) => {
        const b = buttons[choice];
        return {
          type: ComponentType.Button,
          custom_id: `${PREFIX}:${id}:${choice}`,
          label: b.label,
          style: b.danger ? ButtonStyle.Danger : b.primary ? ButtonStyle.Primary : ButtonStyle.Secondary,
        };
      }),
    };
  }

  /** Whether a click belongs to these questions (its custom_id has their form). */
  owns(customId: string): boolean {
    return customId.startsWith(`${PREFIX}:`);
  }

  /** A click: answers its question once, or throws what to tell the member. */
  async click(interaction: ButtonInteraction): Promise<void> {
    const [, id = '', choice = ''] = interaction.customId.split(':');
    const open = this.#open.get(id);
    if (!open || !open.question.choices.includes(choice)) throw new UserError('buttons.expired');
    if (open.question.userId !== interaction.user.id) throw new UserError('buttons.not_yours');
    this.#open.delete(id);
    clearTimeout(open.timer);
    await open.question.answer(choice, interaction);
  }

  /** Forgets every open question (at stop); their messages stay as they are. */
  close(): void {
    for (const { timer } of this.#open.values()) clearTimeout(timer);
    this.#open.clear();
  }
}
