import { ApplicationCommandOptionType, type Attachment, type ChatInputCommandInteraction } from 'discord.js';
import { BotError } from '../errors.ts';

// A command's arguments typed from its own data: `ArgsOf<typeof data.options>` maps
// the declared options to an object (a required option's value, an optional one's or undefined; a
// choice's values as their union), and `readArgs` fills it from `interaction.options` by each
// option's declared type. Subcommands run through a handler map, one handler per declared name.

/** An option as a command's data declares it: enough to type and read its value. */
interface DeclaredOption {
  readonly type: ApplicationCommandOptionType;
  readonly name: string;
  readonly required?: boolean;
  readonly choices?: readonly { readonly value: string | number }[];
  readonly options?: readonly DeclaredOption[];
}

/** The value of one option: its choices' values, or what its type reads as (users, roles, channels and mentionables: the snowflake). */
type ValueOf<O extends DeclaredOption> = O extends { readonly choices: readonly { readonly value: infer V }[] }
  ? V
  : O['type'] extends ApplicationCommandOptionType.String
    ? string
    : O['type'] extends ApplicationCommandOptionType.Integer | ApplicationCommandOptionType.Number
      ? number
      : O['type'] extends ApplicationCommandOptionType.Boolean
        ? boolean
        : O['type'] extends ApplicationCommandOptionType.Attachment
          ? Attachment
          : string;

/** The arguments object of a list of declared options (none: `{}`). */
export type ArgsOf<Options extends readonly DeclaredOption[] | undefined> = [NonNullable<Options>] extends [readonly DeclaredOption[]]
  ? {
      readonly [O in NonNullable<Options>[number] as O['name']]: O extends { readonly required: true }
        ? ValueOf<O>
        : ValueOf<O> | undefined;
    }
  : Record<never, never>;

type Subcommands<Data> = Data extends { readonly options?: readonly (infer O)[] }
  ? Extract<O, { readonly type: ApplicationCommandOptionType.Subcommand }>
  : never;
/** The names of a command's subcommands. */
export type SubcommandName<Data> = Subcommands<Data> extends { readonly name: infer N extends string } ? N : never;
/** The arguments of one subcommand. */
type SubcommandArgs<Data, Name extends string> = ArgsOf<
  Extract<Subcommands<Data>, { readonly name: Name }> extends { readonly options?: infer O extends readonly DeclaredOption[] }
    ? O
    : undefined
>;
/** One handler per subcommand, each given its own typed arguments. */
export type SubcommandHandlers<Data> = { readonly [N in SubcommandName<Data>]: (args: SubcommandArgs<Data, N>) => Promise<void> };

type Options = ChatInputCommandInteraction['options'];

function readOption(o: Options, option: DeclaredOption): unknown {
  const required = option.required === true;
  switch (option.type) {
    case ApplicationCommandOptionType.String:
      return o.getString(option.name, required) ?? undefined;
    case ApplicationCommandOptionType.Integer:
      return o.getInteger(option.name, required) ?? undefined;
    case ApplicationCommandOptionType.Number:
      return o.getNumber(option.name, required) ?? undefined;
    case ApplicationCommandOptionType.Boolean:
      return o.getBoolean(option.name, required) ?? undefined;
    case ApplicationCommandOptionType.Attachment:
      return o.getAttachment(option.name, required) ?? undefined;
    case ApplicationCommandOptionType.Channel:
      return o.getChannel(option.name, required)?.id ?? undefined;
    default: {
      // Users, roles, mentionables: the id as sent, so a deleted role or an unresolved member keeps its id
      // (and a missing one never falls back to the caller).
      const raw = o.get(option.name, required);
      return raw ? String(raw.value) : undefined;
    }
  }
}

/** Reads the declared options from the interaction, each by its declared type. */
export function readArgs<const O extends readonly DeclaredOption[] | undefined>(
  interaction: ChatInputCommandInteraction,
  options: O,
): ArgsOf<O> {
  const args: Record<string, unknown> = {};
  for (const option of options ?? []) args[option.name] = readOption(interaction.options, option);
  return args as ArgsOf<O>;
}

/** Runs the handler of the subcommand the member chose, with its arguments read by their declared types. */
export async function runSubcommand<const Data extends { readonly name: string; readonly options?: readonly DeclaredOption[] }>(
  interaction: ChatInputCommandInteraction,
  data: Data,
  handlers: SubcommandHandlers<Data>,
): Promise<void> {
  const name = interaction.options.getSubcommand();
  const declared = data.options?.find((o) => o.type === ApplicationCommandOptionType.Subcommand && o.name === name);
  if (!declared || !Object.hasOwn(handlers, name))
    throw new BotError('unknown_subcommand', { message: `unknown /${data.name} subcommand ${name}` });
  await (handlers as Record<string, (args: unknown) => Promise<void>>)[name]!(readArgs(interaction, declared.options));
}
