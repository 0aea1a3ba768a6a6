// A message's Apps menu, as Discord shows it (right click, or the ⋯ button on hover): the message
// commands the bot registered (読みを修正 / Fix reading), each run on that message as the member
// the page acts as. The bot's answer is a reply in the timeline, or a modal (modal.js).
import { $, el, loc, post, state, T } from './state.js';
import { openModal } from './modal.js';

/** The message commands (type 3): Discord lists them only here, never after `/`. */
function messageCommands() {
  return state.commands.filter((c) => c.type === 3);
}

let menu = null;

function closeAppsMenu() {
  menu?.remove();
  menu = null;
}

/** Opens the menu for `item` beside `at` (the ⋯ button) or at a point (a right click). */
export function openAppsMenu(item, at) {
  closeAppsMenu();
  const commands = messageCommands();
  const entries = commands.length
    ? commands.map((command) =>
        el('button', {
          type: 'button',
          role: 'menuitem',
          class: 'menu-item',
          text: loc(command),
          onclick: () => {
            closeAppsMenu();
            void run(command, item);
          },
        }),
      )
    : [el('div', { class: 'menu-item muted', role: 'menuitem', 'aria-disabled': 'true', text: T('no_apps') })];
  menu = el(
    'div',
    { class: 'menu', role: 'menu', 'aria-label': T('apps') },
    el('div', { class: 'menu-heading', text: T('apps') }),
    ...entries,
  );
  document.body.append(menu);
  const point = at instanceof Element ? at.getBoundingClientRect() : { left: at.x, bottom: at.y, right: at.x };
  const { width, height } = menu.getBoundingClientRect();
  // Beside what opened it, kept inside the window.
  menu.style.left = `${Math.max(4, Math.min(point.right - width, innerWidth - width - 4))}px`;
  menu.style.top = `${Math.max(4, Math.min(point.bottom + 4, innerHeight - height - 4))}px`;
  menu.querySelector('button')?.focus();
}

async function run(command, item) {
  $('#message-error').textContent = '';
  try {
    const answer = await post('/api/message-command', {
      userId: state.me,
      channelId: item.channelId,
      name: command.name,
      messageId: item.id,
      locale: state.locale,
    });
    if (answer.modal) openModal(answer.modal, answer.id);
  } catch (error) {
    $('#message-error').textContent = error.message;
  }
}

// A click elsewhere or Escape closes it, as a menu does.
document.addEventListener('pointerdown', (event) => {
  if (menu && !menu.contains(event.target)) closeAppsMenu();
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') closeAppsMenu();
});
