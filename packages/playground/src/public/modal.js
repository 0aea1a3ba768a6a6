// A modal the bot opened (Discord's: a title, up to five text inputs, a grey Cancel and a blurple
// Submit). Submitted as the member it opened for; a missing or too long value is said in the chosen
// language before anything is sent, and nothing typed is lost when the bot does not answer.
import { $, el, post, state, T } from './state.js';

/** Opens `modal` (the bot's callback data), the answer to interaction `interactionId`. */
export function openModal(modal, interactionId) {
  const dialog = $('#modal');
  const inputs = (modal.components ?? []).map((row) => row.components?.[0]).filter(Boolean);
  const controls = inputs.map((input, i) => {
    const attrs = {
      id: `modal-${i}`,
      name: input.custom_id,
      placeholder: input.placeholder,
      required: input.required !== false,
      minlength: input.min_length,
      maxlength: input.max_length,
    };
    const control = input.style === 2 ? el('textarea', { ...attrs, rows: 4 }) : el('input', { ...attrs, type: 'text' });
    control.value = input.value ?? '';
    return { input, control };
  });
  const error = el('p', { class: 'error', role: 'alert' });
  const submit = el('button', { type: 'submit', class: 'style-1', text: T('modal_submit') });
  const form = el(
    'form',
    { class: 'modal-form' },
    el('h2', { text: modal.title }),
    ...controls.map(({ input, control }) =>
      el(
        'div',
        { class: 'modal-field' },
        el('label', { for: control.id, class: input.required !== false ? 'required' : '', text: input.label }),
        control,
      ),
    ),
    error,
    el(
      'div',
      { class: 'modal-actions' },
      el('button', { type: 'button', class: 'style-2', text: T('modal_cancel'), onclick: () => dialog.close() }),
      submit,
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const problems = controls.map(({ input, control }) => problem(input, control.value)).filter(Boolean);
    error.textContent = problems.join(' · ');
    if (problems.length) return;
    submit.disabled = true;
    try {
      const values = Object.fromEntries(controls.map(({ input, control }) => [input.custom_id, control.value]));
      const { answered } = await post('/api/modal', { userId: state.me, interactionId, values, locale: state.locale });
      if (answered) dialog.close();
      else error.textContent = T('no_response');
    } catch (e) {
      error.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  });
  dialog.replaceChildren(form);
  dialog.setAttribute('aria-label', modal.title);
  dialog.showModal();
  controls[0]?.control.focus();
}

/** Why a value is refused, in the page's language (the browser's own messages follow its locale, not Discord's). */
function problem(input, value) {
  const length = [...value].length;
  if (input.required !== false && value.trim() === '') return T('required', { name: input.label });
  if (input.min_length !== undefined && length > 0 && length < input.min_length)
    return T('min_chars', { name: input.label, min: input.min_length });
  if (input.max_length !== undefined && length > input.max_length) return T('max_chars', { name: input.label, max: input.max_length });
  return null;
}
