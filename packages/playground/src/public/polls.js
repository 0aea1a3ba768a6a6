// Polls, as Discord's poll UI makes and shows them: the composer's "+" > 投票を作成 / Create poll
// opens its editor (a question, up to 10 answers, a duration, one answer or several); a poll in the
// timeline has an answer button each, which the member the page acts as clicks to vote (again to
// take it back), the votes so far, and for its author an "end now" control (Discord lets only the
// author end a poll early). When it ends Discord posts its result message, shown as Discord shows
// it: whose poll closed, and the winning answer.
import { $, el, nameOf, post, state, T, textChannel } from './state.js';

/** Discord's limits, and the durations its UI offers (hours). */
const POLL_LIMITS = { questionChars: 300, answerChars: 55, answers: 10 };
const DURATIONS = [
  [1, 'dur_1h'],
  [4, 'dur_4h'],
  [8, 'dur_8h'],
  [24, 'dur_24h'],
  [72, 'dur_3d'],
  [168, 'dur_1w'],
  [336, 'dur_2w'],
];

/** The poll editor (Discord's "Create a poll"); the answers typed so far are kept if the post fails. */
export function openPollEditor() {
  const dialog = $('#poll-editor');
  const question = el('input', {
    id: 'poll-question',
    type: 'text',
    maxlength: POLL_LIMITS.questionChars,
    placeholder: T('poll_question_placeholder'),
  });
  const answers = el('div', { class: 'poll-editor-answers' });
  const addAnswer = el('button', { type: 'button', class: 'style-2', text: T('poll_add_answer') });
  const answerInputs = () => [...answers.querySelectorAll('input')];
  const appendAnswer = () => {
    const n = answerInputs().length + 1;
    answers.append(
      el('input', {
        id: `poll-answer-${n}`,
        type: 'text',
        maxlength: POLL_LIMITS.answerChars,
        placeholder: T('poll_answer_placeholder'),
        'aria-label': T('poll_answer_n', { n }),
      }),
    );
    addAnswer.hidden = n >= POLL_LIMITS.answers;
  };
  appendAnswer();
  appendAnswer();
  addAnswer.addEventListener('click', () => {
    appendAnswer();
    answerInputs().at(-1).focus();
  });
  const duration = el(
    'select',
    { id: 'poll-duration' },
    ...DURATIONS.map(([hours, key]) => el('option', { value: String(hours), selected: hours === 24, text: T(key) })),
  );
  const multiple = el('input', { id: 'poll-multiple', type: 'checkbox' });
  const error = el('p', { class: 'error', role: 'alert' });
  const submit = el('button', { type: 'submit', class: 'style-1', text: T('poll_post') });
  const form = el(
    'form',
    { class: 'modal-form' },
    el('h2', { text: T('create_poll') }),
    el('div', { class: 'modal-field' }, el('label', { for: 'poll-question', class: 'required', text: T('poll_question') }), question),
    el('div', { class: 'modal-field' }, el('span', { class: 'label', text: T('poll_answers') }), answers, addAnswer),
    el('div', { class: 'modal-field' }, el('label', { for: 'poll-duration', text: T('poll_duration') }), duration),
    el('label', { class: 'check' }, multiple, ` ${T('poll_multiple')}`),
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
    const given = answerInputs()
      .map((i) => i.value.trim())
      .filter(Boolean);
    const problems = [];
    if (!question.value.trim()) problems.push(T('required', { name: T('poll_question') }));
    if (given.length === 0) problems.push(T('poll_needs_answer'));
    error.textContent = problems.join(' · ');
    if (problems.length) return;
    submit.disabled = true;
    try {
      await post('/api/poll', {
        userId: state.me,
        channelId: textChannel().id,
        question: question.value.trim(),
        answers: given,
        durationHours: Number(duration.value),
        allowMultiselect: multiple.checked,
      });
      dialog.close();
    } catch (e) {
      error.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  });
  dialog.replaceChildren(form);
  dialog.setAttribute('aria-label', T('create_poll'));
  dialog.showModal();
  question.focus();
}

/** How long is left, as Discord words it ("23h left"). */
function timeLeft(expiresAt) {
  const minutes = Math.max(1, Math.round((expiresAt - Date.now()) / 60_000));
  if (minutes < 60) return T('poll_left_minutes', { minutes });
  const hours = Math.round(minutes / 60);
  return hours < 48 ? T('poll_left_hours', { hours }) : T('poll_left_days', { days: Math.round(hours / 24) });
}

/** A poll in the timeline: its question, an answer button each (votes and share), and its footer. */
export function renderPoll(item) {
  const poll = item.poll;
  const total = poll.answers.reduce((n, a) => n + a.voters.length, 0);
  const most = Math.max(0, ...poll.answers.map((a) => a.voters.length));
  const error = el('p', { class: 'error', role: 'alert' });
  const act = (path, body) =>
    post(path, { userId: state.me, messageId: item.id, ...body }).catch((e) => {
      error.textContent = e.message;
    });
  return el(
    'div',
    { class: poll.ended ? 'poll ended' : 'poll' },
    el('div', { class: 'poll-question body', text: poll.question }),
    el('div', { class: 'muted', text: T(poll.ended ? 'poll_final' : poll.allowMultiselect ? 'poll_select_many' : 'poll_select_one') }),
    el(
      'ul',
      { class: 'poll-answers' },
      ...poll.answers.map((a) => {
        const share = total ? Math.round((a.voters.length / total) * 100) : 0;
        const mine = a.voters.includes(state.me);
        const won = poll.ended && total > 0 && a.voters.length === most;
        return el(
          'li',
          {},
          el(
            'button',
            {
              type: 'button',
              class: ['poll-answer', mine ? 'mine' : '', won ? 'won' : ''].join(' ').trim(),
              'aria-pressed': String(mine),
              'aria-label': T('poll_vote_for', { answer: a.text }),
              disabled: poll.ended,
              onclick: () => act('/api/poll-vote', { answerId: a.id }),
            },
            el('span', { class: 'bar', style: `width:${share}%` }),
            el('span', { class: 'answer-text body', text: `${won ? '🏆 ' : mine ? '✓ ' : ''}${a.text}` }),
            el('span', {
              class: 'answer-votes',
              text: T(a.voters.length === 1 ? 'poll_answer_votes_one' : 'poll_answer_votes', { count: a.voters.length, percent: share }),
            }),
          ),
        );
      }),
    ),
    el(
      'div',
      { class: 'poll-footer muted' },
      el('span', {
        text: `${T(total === 1 ? 'poll_votes_one' : 'poll_votes', { count: total })} · ${poll.ended ? T('poll_closed_footer') : timeLeft(poll.expiresAt)}`,
      }),
      !poll.ended && item.authorId === state.me
        ? el('button', { type: 'button', class: 'style-2 poll-end', text: T('poll_end_now'), onclick: () => act('/api/poll-end', {}) })
        : null,
    ),
    error,
  );
}

/** Discord's poll result message: whose poll closed, and its winner (or a tie, or no votes). */
export function renderPollResult(item) {
  const r = item.pollResult;
  const outcome =
    r.totalVotes === 0
      ? T('poll_no_votes')
      : r.winner !== undefined
        ? T('poll_winner_votes', { votes: r.winnerVotes, total: r.totalVotes })
        : T('poll_tie', { votes: r.winnerVotes, total: r.totalVotes });
  const [before, after] = T('poll_closed', { name: nameOf(item.authorId), question: '\u0000' }).split('\u0000');
  return [
    el('div', { class: 'poll-closed' }, '📊 ', before, el('b', { class: 'body', text: r.question }), after),
    el(
      'div',
      { class: 'poll-result' },
      r.winner !== undefined ? el('div', { class: 'poll-winner body', text: `🏆 ${r.winner}` }) : null,
      el('div', { class: 'muted', text: outcome }),
    ),
  ];
}
