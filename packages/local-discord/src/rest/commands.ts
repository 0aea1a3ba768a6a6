/**
 * Application command registration: validation of the bodies Discord accepts and the stored shape
 * it returns (https://discord.com/developers/docs/interactions/application-commands). Validation
 * covers the rules that make a real deploy fail: naming, lengths, option counts and order, locales.
 */
import type { APIApplicationCommand } from 'discord.js';
import { invalidFormBody, type ApiError } from '../errors.ts';
import { snowflake } from '../fixtures.ts';

/** Locales Discord accepts in *_localizations (https://discord.com/developers/docs/reference#locales). */
const DISCORD_LOCALES = new Set([
  'id',
  'da',
  'de',
  'en-GB',
  'en-US',
  'es-ES',
  'es-419',
  'fr',
  'hr',
  'it',
  'lt',
  'hu',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'ro',
  'fi',
  'sv-SE',
  'vi',
  'tr',
  'cs',
  'el',
  'bg',
  'ru',
  'uk',
  'hi',
  'th',
  'zh-CN',
  'ja',
  'zh-TW',
  'ko',
]);

const NAME_PATTERN = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const MAX_COMMANDS = 100;

type Result = { ok: true } | { ok: false; error: ApiError };

/** Validates a bulk-overwrite body (an array of commands). */
export function validateCommandList(body: unknown): Result {
  if (!Array.isArray(body)) return fail('', 'BASE_TYPE_ARRAY', 'Must be an array.');
  if (body.length > MAX_COMMANDS) return fail('', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_COMMANDS} or fewer in length.`);
  const seen = new Set<string>();
  for (const [i, command] of body.entries()) {
    const result = validateCommand(command, `${i}`);
    if (!result.ok) return result;
    const c = command as { name: string; type?: number };
    const key = `${c.type ?? 1}:${c.name}`;
    if (seen.has(key)) return fail(`${i}.name`, 'APPLICATION_COMMANDS_DUPLICATE_NAME', `Application command names must be unique`);
    seen.add(key);
  }
  return { ok: true };
}

/** Validates one command body; `path` prefixes error paths. */
export function validateCommand(command: unknown, path = ''): Result {
  const at = (field: string) => (path ? `${path}.${field}` : field);
  if (typeof command !== 'object' || command === null)
    return fail(path, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
  const c = command as Record<string, unknown>;
  const type = c.type ?? 1;
  if (type !== 1 && type !== 2 && type !== 3 && type !== 4)
    return fail(at('type'), 'BASE_TYPE_CHOICES', `Value must be one of {1, 2, 3, 4}.`);
  const chatInput = type === 1;
  const nameCheck = checkName(c.name, chatInput, at('name'));
  if (!nameCheck.ok) return nameCheck;
  const locCheck = checkLocalizations(c.name_localizations, chatInput, at('name_localizations'), true);
  if (!locCheck.ok) return locCheck;
  if (chatInput) {
    const d = checkDescription(c.description, at('description'));
    if (!d.ok) return d;
    const dl = checkLocalizations(c.description_localizations, chatInput, at('description_localizations'), false);
    if (!dl.ok) return dl;
    return checkOptions(c.options, at('options'));
  }
  if (c.description !== undefined && c.description !== '')
    return fail(at('description'), 'APPLICATION_COMMAND_INVALID_DESCRIPTION', 'Description must be empty for this command type');
  return { ok: true };
}

function checkOptions(options: unknown, path: string): Result {
  if (options === undefined || options === null) return { ok: true };
  if (!Array.isArray(options)) return fail(path, 'BASE_TYPE_ARRAY', 'Must be an array.');
  if (options.length > 25) return fail(path, 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
  let optionalSeen = false;
  const names = new Set<string>();
  for (const [i, option] of options.entries()) {
    const at = (field: string) => `${path}.${i}.${field}`;
    if (typeof option !== 'object' || option === null)
      return fail(`${path}.${i}`, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    const o = option as Record<string, unknown>;
    if (typeof o.type !== 'number' || o.type < 1 || o.type > 11)
      return fail(at('type'), 'BASE_TYPE_CHOICES', 'Value must be one of {1..11}.');
    const n = checkName(o.name, true, at('name'));
    if (!n.ok) return n;
    if (names.has(o.name as string))
      return fail(at('name'), 'APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS', 'Option names must be unique');
    names.add(o.name as string);
    const d = checkDescription(o.description, at('description'));
    if (!d.ok) return d;
    const nl = checkLocalizations(o.name_localizations, true, at('name_localizations'), true);
    if (!nl.ok) return nl;
    const dl = checkLocalizations(o.description_localizations, true, at('description_localizations'), false);
    if (!dl.ok) return dl;
    if (o.type === 1 || o.type === 2) {
      const sub = checkOptions(o.options, at('options'));
      if (!sub.ok) return sub;
      continue;
    }
    if (o.required === true && optionalSeen)
      return fail(
        at('required'),
        'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
        'Required options must be placed before non-required options',
      );
    if (o.required !== true) optionalSeen = true;
    if (o.choices !== undefined) {
      if (!Array.isArray(o.choices)) return fail(at('choices'), 'BASE_TYPE_ARRAY', 'Must be an array.');
      if (o.choices.length > 25) return fail(at('choices'), 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
      if (o.choices.length > 0 && o.autocomplete === true)
        return fail(at('autocomplete'), 'APPLICATION_COMMAND_OPTION_CHOICES_AND_AUTOCOMPLETE', 'Autocomplete cannot be set with choices');
      for (const [j, choice] of (o.choices as Array<Record<string, unknown>>).entries()) {
        if (typeof choice?.name !== 'string' || choice.name.length < 1 || choice.name.length > 100)
          return fail(at(`choices.${j}.name`), 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
      }
    }
  }
  return { ok: true };
}

function checkName(name: unknown, chatInput: boolean, path: string): Result {
  if (typeof name !== 'string' || name.length < 1 || name.length > 32)
    return fail(path, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 32 in length.');
  if (chatInput && (!NAME_PATTERN.test(name) || name !== name.toLowerCase()))
    return fail(path, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
  return { ok: true };
}

function checkDescription(description: unknown, path: string): Result {
  if (typeof description !== 'string' || description.length < 1 || description.length > 100)
    return fail(path, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  return { ok: true };
}

function checkLocalizations(map: unknown, chatInput: boolean, path: string, isName: boolean): Result {
  if (map === undefined || map === null) return { ok: true };
  if (typeof map !== 'object') return fail(path, 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType');
  for (const [locale, value] of Object.entries(map)) {
    if (!DISCORD_LOCALES.has(locale)) return fail(`${path}.${locale}`, 'ENUM_TYPE_COERCE', `Value "${locale}" is not a valid enum value.`);
    const r = isName ? checkName(value, chatInput, `${path}.${locale}`) : checkDescription(value, `${path}.${locale}`);
    if (!r.ok) return r;
  }
  return { ok: true };
}

function fail(path: string, code: string, message: string): { ok: false; error: ApiError } {
  return { ok: false, error: invalidFormBody(path || '_root', code, message) };
}

/**
 * The stored form of a registered command. Like Discord, an overwrite keeps the id of an existing
 * command with the same name and type.
 */
export function storeCommand(
  body: Record<string, unknown>,
  applicationId: string,
  guildId: string | undefined,
  existing: readonly APIApplicationCommand[],
): APIApplicationCommand {
  const type = (body.type as number | undefined) ?? 1;
  const previous = existing.find((c) => c.name === body.name && c.type === type);
  return {
    ...body,
    id: previous?.id ?? snowflake(),
    application_id: applicationId,
    ...(guildId ? { guild_id: guildId } : {}),
    version: snowflake(),
    type,
    name: body.name as string,
    name_localizations: (body.name_localizations as Record<string, string> | undefined) ?? null,
    description: (body.description as string | undefined) ?? '',
    description_localizations: (body.description_localizations as Record<string, string> | undefined) ?? null,
    default_member_permissions: (body.default_member_permissions as string | null | undefined) ?? null,
    dm_permission: (body.dm_permission as boolean | undefined) ?? true,
    nsfw: (body.nsfw as boolean | undefined) ?? false,
    contexts: (body.contexts as number[] | null | undefined) ?? null,
    integration_types: (body.integration_types as number[] | undefined) ?? [0],
  } as APIApplicationCommand;
}
