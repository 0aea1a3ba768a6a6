// The composer's "+" menu, as Discord's: upload a file (the member picks one), attach the
// playground's sample image (a sunset over the sea), or create a poll.
import { $, el, T } from './state.js';
import { addFiles, attachSample } from './attachments.js';
import { openPollEditor } from './polls.js';

let menu = null;

function close() {
  menu?.remove();
  menu = null;
  $('#composer-plus').setAttribute('aria-expanded', 'false');
}

function open() {
  const button = $('#composer-plus');
  const item = (key, action) =>
    el('button', {
      type: 'button',
      role: 'menuitem',
      class: 'menu-item',
      text: T(key),
      onclick: () => {
        close();
        action();
      },
    });
  menu = el(
    'div',
    { class: 'menu', role: 'menu', 'aria-label': T('plus_menu') },
    item('upload_file', () => $('#file-input').click()),
    item('attach_sample', () => void attachSample().catch((e) => ($('#message-error').textContent = e.message))),
    item('create_poll', openPollEditor),
  );
  document.body.append(menu);
  // Above the button, as Discord opens it, kept inside the window.
  const at = button.getBoundingClientRect();
  const { height } = menu.getBoundingClientRect();
  menu.style.left = `${Math.max(4, at.left)}px`;
  menu.style.top = `${Math.max(4, at.top - height - 4)}px`;
  button.setAttribute('aria-expanded', 'true');
  menu.querySelector('button').focus();
}

export function wirePlusMenu() {
  $('#composer-plus').addEventListener('click', () => (menu ? close() : open()));
  $('#file-input').addEventListener('change', (event) => {
    addFiles([...event.target.files]);
    event.target.value = '';
    $('#message').focus();
  });
  document.addEventListener('pointerdown', (event) => {
    if (menu && !menu.contains(event.target) && event.target !== $('#composer-plus')) close();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && menu) {
      close();
      $('#composer-plus').focus();
    }
  });
}
