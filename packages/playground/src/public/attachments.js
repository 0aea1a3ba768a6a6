// Files a member attaches to a message, as Discord's composer holds them: a tile each above the
// message box (its preview, its name, the alt text written for it), Discord's attachment editor
// (✏️: "説明（代替テキスト）" / "Description (alt text)") and a remove button; sent with the message
// (base64 in its JSON), then cleared. Discord's limits are said in the page's language before
// anything is sent: 10 files a message, 10 MB each, alt text of 1,024 characters. In a sent
// message, an image is shown with its alt text (the ALT badge shows it, as Discord's does).
import { $, el, T } from './state.js';

/** Discord's limits (without Nitro). */
const LIMITS = { files: 10, bytes: 10 * 1024 * 1024, altTextChars: 1024 };

/** What will be sent: { file, description, preview (an object URL for images) }. */
const pending = [];

export function hasAttachments() {
  return pending.length > 0;
}

/** Adds files (a picker's, or the sample image); one over the limits is refused with a word why, the others kept. */
export function addFiles(files) {
  const problems = [];
  for (const file of files) {
    if (pending.length >= LIMITS.files) {
      problems.push(T('too_many_files', { max: LIMITS.files }));
      break;
    }
    if (file.size > LIMITS.bytes) {
      problems.push(T('file_too_big', { name: file.name, max: LIMITS.bytes / 1024 / 1024 }));
      continue;
    }
    if (file.size === 0) {
      problems.push(T('file_empty', { name: file.name }));
      continue;
    }
    pending.push({ file, description: '', preview: file.type.startsWith('image/') ? URL.createObjectURL(file) : null });
  }
  $('#message-error').textContent = problems.join(' · ');
  renderTray();
}

/** The playground's sample image (a sunset over the sea), attached as a picked file would be. */
export async function attachSample() {
  const res = await fetch('/api/sample-image.png');
  const blob = await res.blob();
  addFiles([new File([blob], 'sunset.png', { type: 'image/png' })]);
}

/** The files as the page's API takes them. */
export async function attachmentPayload() {
  return Promise.all(
    pending.map(async ({ file, description }) => ({
      filename: file.name,
      contentType: file.type || 'application/octet-stream',
      data: await base64(file),
      ...(description ? { description } : {}),
    })),
  );
}

/** After the message is sent. */
export function clearAttachments() {
  for (const p of pending.splice(0)) if (p.preview) URL.revokeObjectURL(p.preview);
  renderTray();
}

function base64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

export function renderTray() {
  const tray = $('#attachments');
  tray.hidden = pending.length === 0;
  tray.replaceChildren(
    ...pending.map((p, i) =>
      el(
        'li',
        { class: 'tile' },
        p.preview ? el('img', { src: p.preview, alt: p.description || p.file.name }) : el('span', { class: 'file-icon', text: '📄' }),
        el('span', { class: 'filename', text: p.file.name }),
        p.description
          ? el(
              'span',
              { class: 'alt-line' },
              el('span', { class: 'alt-badge', text: T('alt_badge') }),
              el('span', { class: 'body', text: p.description }),
            )
          : null,
        el(
          'span',
          { class: 'tile-actions' },
          el('button', {
            type: 'button',
            class: 'edit',
            title: T('edit_attachment'),
            'aria-label': T('edit_attachment_of', { name: p.file.name }),
            text: '✏️',
            onclick: () => openEditor(i),
          }),
          el('button', {
            type: 'button',
            class: 'remove',
            title: T('remove_attachment'),
            'aria-label': T('remove_attachment_of', { name: p.file.name }),
            text: '🗑',
            onclick: () => {
              const [gone] = pending.splice(i, 1);
              if (gone.preview) URL.revokeObjectURL(gone.preview);
              renderTray();
              $('#message').focus();
            },
          }),
        ),
      ),
    ),
  );
}

/** Discord's attachment editor: the file's name, and its description (alt text). */
function openEditor(index) {
  const item = pending[index];
  const dialog = $('#attachment-editor');
  const alt = el('textarea', { id: 'alt-text', rows: 3, maxlength: LIMITS.altTextChars });
  alt.value = item.description;
  const error = el('p', { class: 'error', role: 'alert' });
  const form = el(
    'form',
    { class: 'modal-form' },
    el('h2', { text: item.file.name }),
    item.preview ? el('img', { class: 'editor-preview', src: item.preview, alt: '' }) : null,
    el(
      'div',
      { class: 'modal-field' },
      el('label', { for: 'alt-text', text: T('alt_text') }),
      alt,
      el('span', { class: 'muted hint', text: T('alt_text_hint') }),
    ),
    error,
    el(
      'div',
      { class: 'modal-actions' },
      el('button', { type: 'button', class: 'style-2', text: T('modal_cancel'), onclick: () => dialog.close() }),
      el('button', { type: 'submit', class: 'style-1', text: T('save') }),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = alt.value.trim();
    if ([...text].length > LIMITS.altTextChars) {
      error.textContent = T('max_chars', { name: T('alt_text'), max: LIMITS.altTextChars });
      return;
    }
    item.description = text;
    dialog.close();
    renderTray();
    $('#message').focus();
  });
  dialog.replaceChildren(form);
  dialog.setAttribute('aria-label', T('edit_attachment'));
  dialog.showModal();
  alt.focus();
}

/** A member's attachment in a sent message: an image with its alt text (the badge shows it), else a link to the file. */
export function renderMemberAttachment(a) {
  const image = a.contentType.startsWith('image/');
  const text = a.description ? el('p', { class: 'alt-text body', hidden: true, text: a.description }) : null;
  return el(
    'div',
    { class: image ? 'attachment image member-file' : 'attachment member-file' },
    image ? el('img', { src: a.url, alt: a.description ?? '', class: 'image' }) : null,
    text
      ? el('button', {
          type: 'button',
          class: 'alt-badge',
          'aria-expanded': 'false',
          'aria-label': T('alt_text'),
          title: T('alt_text'),
          text: T('alt_badge'),
          onclick: (event) => {
            text.hidden = !text.hidden;
            event.currentTarget.setAttribute('aria-expanded', String(!text.hidden));
          },
        })
      : null,
    text,
    image ? null : el('a', { href: `${a.url}?download=1`, download: a.filename, text: `⬇ ${a.filename}` }),
  );
}
