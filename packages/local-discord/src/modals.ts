/**
 * Message commands and modals: a member runs a message command on a message (Apps on its menu, an
 * application command of type 3 with `target_id` and the message resolved), the bot answers with a
 * modal (callback type 9), and the member submits it (interaction type 5, MODAL_SUBMIT).
 * https://discord.com/developers/docs/interactions/application-commands#message-commands
 * https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-modal
 * https://discord.com/developers/docs/components/reference#text-input
 */
import type { APIApplicationCommand } from 'discord.js';
import { invalidFormBody, LocalDiscordError, type ApiError } from './errors.ts';
import { snowflake } from './fixtures.ts';
import type { DiscordState } from './state.ts';
import type { SendInteractionInput } from './types.ts';

/** The limits of a modal and its text inputs as Discord documents them. */
const MODAL_LIMITS = { titleMax: 45, customIdMax: 100, rowsMax: 5, labelMax: 45, valueMax: 4000, placeholderMax: 100 } as const;

interface TextInput {
  type: 4;
  custom_id: string;
  label: string;
  style: 1 | 2;
  min_length?: number;
  max_length?: number;
  required?: boolean;
  value?: string;
  placeholder?: string;
}

/** A modal callback's `data`, refused as Discord refuses it: title, custom_id, 1-5 action rows of one text input each. */
export function validateModal(data: Record<string, unknown> | null): ApiError | undefined {
  const d = data ?? {};
  const text = (v: unknown, max: number) => typeof v === 'string' && v.length >= 1 && v.length <= max;
  if (!text(d.custom_id, MODAL_LIMITS.customIdMax))
    return invalidFormBody('data.custom_id', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  if (!text(d.title, MODAL_LIMITS.titleMax))
    return invalidFormBody('data.title', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 45 in length.');
  const rows = d.components;
  if (!Array.isArray(rows) || rows.length < 1 || rows.length > MODAL_LIMITS.rowsMax)
    return invalidFormBody('data.components', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.');
  const ids = new Set<string>();
  for (const [i, row] of rows.entries()) {
    const at = `data.components.${i}`;
    const inputs = (row as { type?: unknown; components?: unknown }).components;
    if ((row as { type?: unknown }).type !== 1 || !Array.isArray(inputs) || inputs.length !== 1)
      return invalidFormBody(at, 'COMPONENT_LAYOUT_WIDTH_EXCEEDED', 'An action row in a modal holds exactly one text input');
    const input = inputs[0] as Partial<TextInput>;
    const field = (name: string) => `${at}.components.0.${name}`;
    if (input.type !== 4) return invalidFormBody(field('type'), 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (4,).');
    if (!text(input.custom_id, MODAL_LIMITS.customIdMax))
      return invalidFormBody(field('custom_id'), 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    if (ids.has(input.custom_id!))
      return invalidFormBody(field('custom_id'), 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated');
    ids.add(input.custom_id!);
    if (!text(input.label, MODAL_LIMITS.labelMax))
      return invalidFormBody(field('label'), 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 45 in length.');
    if (input.style !== 1 && input.style !== 2) return invalidFormBody(field('style'), 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
    if (input.placeholder !== undefined && !text(input.placeholder, MODAL_LIMITS.placeholderMax))
      return invalidFormBody(field('placeholder'), 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    if (input.max_length !== undefined && (input.max_length < 1 || input.max_length > MODAL_LIMITS.valueMax))
      return invalidFormBody(field('max_length'), 'NUMBER_TYPE_MAX', 'int value should be between 1 and 4000.');
    if (input.value !== undefined && input.value.length > (input.max_length ?? MODAL_LIMITS.valueMax))
      return invalidFormBody(field('value'), 'BASE_TYPE_MAX_LENGTH', 'Must be at most max_length in length.');
  }
  return undefined;
}

/** A message command's `data`: the command, `target_id`, and the target message resolved. */
export function messageCommandData(state: DiscordState, input: SendInteractionInput, command: APIApplicationCommand | undefined) {
  const messageId = input.target?.messageId ?? '';
  const message = state.findAnyMessage(messageId);
  if (!message || message.channel_id !== input.channelId)
    throw new LocalDiscordError('unknown_message', { message: `no message ${messageId} in channel ${input.channelId}` });
  if (command && command.type !== 3) throw new LocalDiscordError('unknown_message', { message: `/${input.name} is not a message command` });
  return {
    id: command?.id ?? snowflake(),
    name: input.name,
    type: 3,
    target_id: message.id,
    resolved: { messages: { [message.id]: message } },
    ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
  };
}

/**
 * A modal submit's `data`: the modal the bot opened in answer to `input.modal.interactionId`, with
 * the member's values for its text inputs (an input left out is submitted empty, as a cleared field is).
 */
export function modalSubmitData(state: DiscordState, input: SendInteractionInput) {
  const wanted = input.modal;
  if (!wanted) throw new LocalDiscordError('unknown_message', { message: 'a modal submit needs `modal`' });
  const opened = state.interactions.get(wanted.interactionId)?.responses.find((r) => r.kind === 'callback' && r.type === 9)?.data;
  if (!opened) throw new LocalDiscordError('unknown_message', { message: `interaction ${wanted.interactionId} opened no modal` });
  const inputs = (opened.components as Array<{ components: TextInput[] }>).map((row) => row.components[0]!);
  for (const id of Object.keys(wanted.values))
    if (!inputs.some((i) => i.custom_id === id))
      throw new LocalDiscordError('unknown_message', { message: `the modal has no text input ${id}` });
  return {
    custom_id: opened.custom_id as string,
    components: inputs.map((i) => ({
      type: 1,
      components: [{ type: 4, custom_id: i.custom_id, value: wanted.values[i.custom_id] ?? i.value ?? '' }],
    })),
  };
}
