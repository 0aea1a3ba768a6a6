// On a phone, as in Discord's mobile app: the chat fills the screen, and the server (channels,
// members, the page's steps) and the side panels (voice, the service, the bot's log) slide in as
// drawers from the left and the right, opened from the header and closed by a tap beside them.
import { $ } from './state.js';

const DRAWERS = [
  { panel: '#server', toggle: '#open-server' },
  { panel: '#side', toggle: '#open-side' },
];

/** Closes any open drawer. */
export function closeDrawers() {
  for (const { panel, toggle } of DRAWERS) {
    $(panel).classList.remove('open');
    $(toggle).setAttribute('aria-expanded', 'false');
  }
  $('#backdrop').hidden = true;
}

function open(panel, toggle) {
  const opening = !$(panel).classList.contains('open');
  closeDrawers();
  if (!opening) return;
  $(panel).classList.add('open');
  $(toggle).setAttribute('aria-expanded', 'true');
  $('#backdrop').hidden = false;
  $(panel).querySelector('button, select')?.focus();
}

export function wireDrawers() {
  for (const { panel, toggle } of DRAWERS) $(toggle).addEventListener('click', () => open(panel, toggle));
  $('#backdrop').addEventListener('click', closeDrawers);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeDrawers();
  });
  // Choosing a channel is done with the drawer, as in Discord's app.
  $('#server').addEventListener('click', (event) => {
    if (event.target.closest('button.channel')) closeDrawers();
  });
}
