// The playground page: plain JavaScript, no build step. State arrives over one WebSocket
// (/api/live): a snapshot first, then every change; binary messages are the voice channels' audio
// (16-bit: the voice channel's index, then mono 48 kHz PCM, about 20 ms each), played with WebAudio
// when the member the page acts as is in that channel. Members act through the JSON API; the server
// has two text and two voice channels, read at once by two accounts of the bot.
// This module wires the others (ES modules, no build step): state.js (what they share),
// strings.js (the page's own texts, English and Japanese after the Discord language chosen),
// guild-view.js (channels and members), timeline.js (the messages), commands.js (the command
// form), composer.js (the message box), audio.js (what the member hears), service.js (the panels).
import { $, heard, member, PAGE_TEXT, post, state, T, textChannel, voiceChannel } from './state.js';
import { translateDocument } from './strings.js';
import { createComposer } from './composer.js';
import { onAudio, speaker } from './audio.js';
import { renderServer, setMe } from './guild-view.js';
import { jumpToPresent, renderUnseen, upsertItem, watchTimeline } from './timeline.js';
import { appendLog, connection, renderBotStatus, renderConnection, renderService, renderUtterance } from './service.js';
import { chooseCommand, commandLeaves, renderCommandForm, renderCommandList, renderSubcommands, runCommand } from './commands.js';
import { closeDrawers, wireDrawers } from './drawers.js';
import { attachmentPayload, clearAttachments, hasAttachments, renderTray } from './attachments.js';
import { wirePlusMenu } from './plus-menu.js';

window.playground = {
  state,
  heard,
  pageText: PAGE_TEXT,
  get audioContext() {
    return speaker.ctx;
  },
};

// ---- wiring -------------------------------------------------------------------------------------

/** Everything in the chosen Discord language: the page's texts, the commands, the timeline. */
function renderLanguage() {
  translateDocument(state.locale);
  renderBotStatus();
  renderConnection();
  if (!state.guild) return;
  renderServer();
  renderCommandList();
  if (state.service) renderService(state.service);
  for (const item of state.items.values()) upsertItem(item);
  for (const u of state.utterances.values()) renderUtterance(u);
  renderUnseen();
  renderTray();
}

async function toggleVoice() {
  const voice = voiceChannel();
  const inVoice = state.guild.voiceStates.some((v) => v.userId === state.me);
  if (!inVoice) speaker.start(); // this click is the gesture the browser needs to play sound
  try {
    await post('/api/voice', { userId: state.me, channelId: inVoice ? null : voice.id });
  } catch (error) {
    $('#command-error').textContent = error.message;
  }
}

function applySnapshot(snapshot) {
  state.guild = snapshot.guild;
  state.botUser = snapshot.botUser;
  state.botUsers = snapshot.botUsers ?? [snapshot.botUser];
  state.commands = snapshot.commands;
  state.botStatus = snapshot.bot.status;
  const dashboard = $('#dashboard-link');
  dashboard.hidden = !snapshot.dashboardUrl;
  if (snapshot.dashboardUrl) dashboard.href = snapshot.dashboardUrl;
  if (!member(state.me) || member(state.me).bot) state.me = snapshot.guild.members.find((m) => !m.bot)?.id ?? '';
  state.items.clear();
  $('#timeline').replaceChildren();
  for (const item of snapshot.timeline) upsertItem(item);
  $('#utterances').replaceChildren();
  for (const u of snapshot.utterances) renderUtterance(u);
  $('#log').replaceChildren();
  for (const line of snapshot.bot.logs) appendLog(line);
  renderService(snapshot.service);
  renderBotStatus();
  renderServer();
  renderCommandList();
}

function connect() {
  const ws = new WebSocket(`ws://${location.host}/api/live`);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => {
    connection.state = 'connected';
    renderConnection();
  };
  ws.onmessage = (event) => {
    if (event.data instanceof ArrayBuffer) return onAudio(event.data);
    const message = JSON.parse(event.data);
    switch (message.t) {
      case 'hello':
        return applySnapshot(message.state);
      case 'item':
        return upsertItem(message.item);
      case 'voice':
        state.guild.voiceStates = message.voiceStates;
        if (message.channels) state.guild.channels = message.channels;
        return renderServer();
      case 'utterance':
        return renderUtterance(message.utterance);
      case 'service':
        return renderService(message.service);
      case 'bot':
        state.botStatus = message.status;
        return renderBotStatus();
      case 'log':
        return appendLog(message.line);
    }
  };
  ws.onclose = () => {
    connection.state = 'disconnected';
    renderConnection();
    setTimeout(connect, 2000);
  };
}

$('#locale').value = state.locale;
$('#locale').addEventListener('change', (event) => {
  state.locale = event.target.value;
  localStorage.setItem('playground.locale', state.locale);
  renderLanguage();
});
translateDocument(state.locale);
renderConnection();
watchTimeline();
$('#as-member').addEventListener('change', (event) => setMe(event.target.value));
$('#command').addEventListener('change', () => {
  $('#subcommand').value = '';
  renderSubcommands();
});
$('#subcommand').addEventListener('change', renderSubcommands);
$('#subsubcommand').addEventListener('change', renderCommandForm);
$('#command-form').addEventListener('submit', runCommand);
createComposer({
  box: $('#message'),
  list: $('#mentions'),
  count: $('#message-count'),
  error: $('#message-error'),
  members: () => state.guild?.members ?? [],
  commands: commandLeaves,
  pickCommand: (command) => chooseCommand(command.path).focus(),
  hasAttachments,
  send: async (content) => {
    await post('/api/message', { userId: state.me, channelId: textChannel().id, content, attachments: await attachmentPayload() });
    // Sent: the files go with it (kept when it was refused).
    clearAttachments();
    // What the member writes is where the timeline goes, as in Discord.
    jumpToPresent();
  },
  say: T,
});
wireDrawers();
wirePlusMenu();
$('#voice-toggle').addEventListener('click', toggleVoice);
// The page's steps, as buttons: each does what it says.
$('#step-voice').addEventListener('click', () => {
  if (!state.guild?.voiceStates.some((v) => v.userId === state.me)) void toggleVoice();
  else speaker.start();
});
$('#step-join').addEventListener('click', () => {
  closeDrawers();
  chooseCommand(['join']);
  $('#command-form').requestSubmit();
});
$('#step-write').addEventListener('click', () => {
  closeDrawers();
  $('#message').focus();
});
// Browsers play sound only after a click on the page: any click will do (after a reload, say).
document.addEventListener('pointerdown', () => speaker.start());
connect();
