// Branches of a conversation on screen: a regenerated answer or an edited
// message is a turn beside the one it replaces (POST …/messages with
// replaces), and GET …/messages lists the branch shown with, per turn,
// where it stands among the turns beside it. decorate adds to a rendered
// transcript the pager (‹ 2/3 ›) of each turn that has siblings, Edit on
// each message the person wrote (edit in place, Send or Cancel),
// Regenerate on the last answer, and a note that what a replaced branch
// did is not undone.
import { h } from './dom.js';
import { t } from './i18n.js';

// decorate adds the branch controls to the items of log. turns is the
// listing's turns; on holds regenerate(turnID, text), edit(turnID, text)
// and show(turnID) (switch to a sibling), each returning a promise.
export function decorate(log, turns, on) {
  for (const old of log.querySelectorAll('.pager, button.edit, button.regenerate')) old.remove();
  const byTurn = new Map((turns ?? []).map((b) => [b.turn_id, b]));
  let branched = false;
  for (const item of log.querySelectorAll('li.msg.user[data-turn]')) {
    const b = byTurn.get(item.dataset.turn);
    if (!b || item.dataset.first !== 'true') continue;
    const row = item.querySelector('.msg-actions');
    if (b.count > 1) {
      branched = true;
      row.prepend(pager(b, on.show));
    }
    row.append(h('button', { type: 'button', class: 'edit secondary small', onclick: () => editInPlace(item, b.turn_id, on.edit) }, t('branch.edit')));
  }
  const answers = log.querySelectorAll('li.msg.assistant[data-turn]');
  const last = answers[answers.length - 1];
  const lastTurn = turns?.length ? turns[turns.length - 1].turn_id : '';
  if (last && last.dataset.turn === lastTurn) {
    const said = log.querySelector(`li.msg.user[data-turn="${CSS.escape(lastTurn)}"][data-first="true"]`);
    if (said) {
      last.querySelector('.msg-actions').append(h('button', { type: 'button', class: 'regenerate secondary small',
        onclick: () => on.regenerate(lastTurn, said.dataset.text ?? '') }, t('branch.regenerate')));
    }
  }
  return branched ? note() : null;
}

// note says what switching or replacing a branch does not undo.
export function note() {
  return h('p', { class: 'branch-note muted', id: 'branch-note' }, t('branch.note'));
}

// pager is ‹ n/m › for a turn among its siblings.
function pager(b, show) {
  const go = (i) => () => show(b.siblings[i]);
  return h('span', { class: 'pager', role: 'group', 'aria-label': t('branch.pagerLabel', { n: b.index, m: b.count }) },
    h('button', { type: 'button', class: 'prev', disabled: b.index <= 1, 'aria-label': t('branch.prev'), onclick: go(b.index - 2) }, '‹'),
    h('span', { class: 'pager-count', 'aria-hidden': 'true' }, t('branch.pager', { n: b.index, m: b.count })),
    h('button', { type: 'button', class: 'next', disabled: b.index >= b.count, 'aria-label': t('branch.next'), onclick: go(b.index) }, '›'));
}

// editInPlace turns a sent message into a form holding its text: Send
// resends the edited text as a branch beside the turn, Cancel puts the
// message back as it was.
function editInPlace(item, turnID, edit) {
  if (item.querySelector('form.edit-form')) return;
  const body = item.querySelector('.text');
  const actions = item.querySelector('.msg-actions');
  const id = `edit-${turnID}`;
  const box = h('textarea', { id, class: 'edit-box', rows: 3, 'aria-describedby': `${id}-note` });
  box.value = item.dataset.text ?? body.textContent;
  const restore = () => {
    form.remove();
    body.hidden = false;
    actions.hidden = false;
  };
  const form = h('form', { class: 'edit-form', onsubmit: (e) => {
    e.preventDefault();
    if (box.value.trim()) edit(turnID, box.value);
  } },
  h('label', { for: id, class: 'sr-only' }, t('branch.editLabel')),
  box,
  h('p', { class: 'muted small', id: `${id}-note` }, t('branch.note')),
  h('div', { class: 'edit-actions' },
    h('button', { type: 'button', class: 'secondary small cancel-edit', onclick: restore }, t('common.cancel')),
    h('button', { type: 'submit', class: 'primary small send-edit' }, t('branch.send'))));
  body.hidden = true;
  actions.hidden = true;
  item.append(form);
  box.focus();
}
