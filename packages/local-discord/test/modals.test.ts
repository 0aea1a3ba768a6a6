import { once } from 'node:events';
import {
  ComponentType,
  DiscordAPIError,
  TextInputStyle,
  type Client,
  type Interaction,
  type MessageContextMenuCommandInteraction,
  type ModalSubmitInteraction,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { loginClient } from './helpers.ts';

// Message commands, modals and their submit as Discord documents them:
// https://discord.com/developers/docs/interactions/application-commands#message-commands and
// https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-modal
let fake: FakeDiscord;
let client: Client<true>;
beforeAll(async () => {
  fake = await startFakeDiscord();
  client = await loginClient(fake);
});
afterAll(async () => {
  await client?.destroy();
  await fake?.close();
});

const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
async function dispatch<T extends Interaction>(input: Parameters<FakeDiscord['sendInteraction']>[0]) {
  const emitted = once(client, 'interactionCreate') as Promise<[T]>;
  const handle = await fake.sendInteraction(input);
  const [interaction] = await emitted;
  return { handle, interaction };
}
const row = (customId: string, label: string) => ({
  type: ComponentType.ActionRow as const,
  components: [{ type: ComponentType.TextInput as const, custom_id: customId, label, style: TextInputStyle.Short, required: false }],
});

describe('message commands and modals', () => {
  it("run on a member's message, answered with a modal; the submit brings the values back", async () => {
    const { id } = await fake.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: '御徒町に行く' });
    const { handle, interaction } = await dispatch<MessageContextMenuCommandInteraction>({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'Fix reading',
      target: { messageId: id },
    });
    expect(interaction.isMessageContextMenuCommand()).toBe(true);
    expect(interaction.targetMessage.content).toBe('御徒町に行く');
    // Six rows is one more than Discord takes: refused with 50035, nothing recorded.
    const six = Array.from({ length: 6 }, (_, i) => row(`w${i}`, `word ${i}`));
    const refused = await interaction.showModal({ custom_id: 'm', title: 'Fix', components: six }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DiscordAPIError);
    expect((refused as DiscordAPIError).code).toBe(50035);
    await interaction.showModal({ custom_id: 'm', title: 'Fix', components: [row('a', '御徒町'), row('b', '行')] });
    expect((await handle.waitForResponse()).type).toBe(9);
    const { interaction: submit } = await dispatch<ModalSubmitInteraction>({
      type: 5,
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: '',
      modal: { interactionId: handle.id, values: { a: 'おかちまち' } },
    });
    expect(submit.isModalSubmit()).toBe(true);
    expect(submit.customId).toBe('m');
    expect(submit.fields.getTextInputValue('a')).toBe('おかちまち');
    expect(submit.fields.getTextInputValue('b')).toBe('');
  });
});
