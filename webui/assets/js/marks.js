// What people and the agent did to a message besides writing it: its
// reactions, a pin, an "edited" or "deleted" note and a link to the
// thread started from it (GET …/messages gives them with each message),
// kept up to date while a turn runs (the stream's "messages" events), and
// the conversation's pinned messages and its link back to the
// conversation a thread was started in. Emoji and titles go in as text.
import { h, replace, menu } from './dom.js';
import { markdown } from './markdown.js';
import { t } from './i18n.js';

const enc = encodeURIComponent;

// marksOf is the marks part of a stored message (or of nothing).
function marksOf(m) {
  return {
    reactions: (m?.reactions ?? []).map((r) => ({ ...r })),
    pinned: Boolean(m?.pinned), edited: Boolean(m?.edited), deleted: Boolean(m?.deleted), thread: m?.thread ?? '',
  };
}

// showMarks ties item, a message on screen, to its stored seq and shows
// m's marks under its text.
export function showMarks(item, m) {
  item.dataset.seq = String(m.seq);
  item.marks = marksOf(m);
  draw(item);
}

// draw (re)renders item's marks row from item.marks; a message without
// marks has none.
function draw(item) {
  const k = item.marks;
  item.querySelector(':scope > .msg-marks')?.remove();
  item.classList.toggle('pinned', k.pinned);
  item.classList.toggle('deleted', k.deleted);
  if (k.deleted) {
    const text = item.querySelector(':scope > .text');
    if (text) replace(text, h('em', null, t('marks.deletedText')));
  }
  const parts = [];
  if (k.pinned) parts.push(h('span', { class: 'mark pin' }, h('span', { 'aria-hidden': 'true' }, '📌 '), t('marks.pinned')));
  if (k.edited && !k.deleted) parts.push(h('span', { class: 'mark edited' }, t('marks.edited')));
  if (k.reactions.length) {
    parts.push(h('ul', { class: 'reactions', 'aria-label': t('marks.reactions') },
      k.reactions.map((r) => h('li', { class: r.agent ? 'reaction agent' : 'reaction', 'aria-label': reactionLabel(r) },
        h('span', { 'aria-hidden': 'true' }, `${r.emoji} ${r.count}`)))));
  }
  if (k.thread) parts.push(h('a', { class: 'mark thread', href: `#/chat/${enc(k.thread)}` }, t('marks.openThread')));
  if (!parts.length) return;
  const row = h('div', { class: 'msg-marks' }, parts);
  const actions = item.querySelector(':scope > .msg-actions');
  if (actions) actions.before(row);
  else item.append(row);
}

// reactionLabel says a reaction in words: the emoji, how many, and who.
function reactionLabel(r) {
  const who = r.agent && r.mine ? t('marks.byBoth') : r.agent ? t('marks.byAgent') : r.mine ? t('marks.byYou') : '';
  return t('marks.reaction', { emoji: r.emoji, count: r.count }) + (who ? ` (${who})` : '');
}

// applyChanges shows a running turn's message changes (the stream's
// "messages" event) on the messages of log, the transcript of the
// conversation conversationID; a change elsewhere (a post into another
// conversation) is not this transcript's. It returns whether any applied.
export function applyChanges(log, conversationID, changes) {
  let applied = false;
  for (const c of changes ?? []) {
    if (c.conversation !== conversationID || !c.message) continue;
    const item = log.querySelector(`li.msg[data-seq="${CSS.escape(c.message)}"]`);
    if (!item) continue;
    item.marks ??= marksOf(null);
    change(item.marks, c, item);
    draw(item);
    applied = true;
  }
  return applied;
}

// change applies one change to k (item's marks and, for an edit, its text).
function change(k, c, item) {
  switch (c.action) {
    case 'react': {
      const r = k.reactions.find((x) => x.emoji === c.emoji);
      if (!r) k.reactions.push({ emoji: c.emoji, count: 1, agent: true });
      else if (!r.agent) Object.assign(r, { count: r.count + 1, agent: true });
      break;
    }
    case 'unreact': {
      const r = k.reactions.find((x) => x.emoji === c.emoji);
      if (r?.agent) {
        r.agent = false;
        r.count--;
        if (r.count <= 0) k.reactions.splice(k.reactions.indexOf(r), 1);
      }
      break;
    }
    case 'pin': k.pinned = true; break;
    case 'unpin': k.pinned = false; break;
    case 'edit': {
      k.edited = true;
      const text = item.querySelector(':scope > .text');
      if (text && c.text) replace(text, item.classList.contains('assistant') ? markdown(c.text) : c.text);
      break;
    }
    case 'delete': Object.assign(k, { deleted: true, pinned: false, reactions: [] }); break;
    case 'thread': k.thread = c.thread; break;
  }
}

// parentLink is a thread's way back: the conversation it was started in
// (conv.parent, from GET /api/conversations/{id}), or null.
export function parentLink(conv) {
  const p = conv?.parent;
  if (!p) return null;
  const href = `#/chat/${enc(p.conversation_id)}`;
  return h('p', { class: 'thread-parent' }, t('marks.threadOf'), ' ',
    h('a', { href, id: 'thread-parent' }, p.title || t('marks.untitledParent')));
}

// pinsMenu is the conversation's pinned messages: a disclosure menu that
// reads them (GET …/pins) each time it opens, each a button that brings
// the message into view when the transcript shows it.
export function pinsMenu(api, conversationID, log) {
  const status = h('p', { class: 'menu-status muted', role: 'status' });
  const list = h('div', { class: 'pins-list', id: 'pins-list' });
  const el = menu('pins-menu', { class: 'button small', id: 'pins-toggle' },
    [h('span', { 'aria-hidden': 'true' }, '📌'), h('span', { class: 'pins-label' }, ' ', t('marks.pinnedList'))], [status, list]);
  el.addEventListener('toggle', async () => {
    if (!el.open) return;
    replace(list);
    status.textContent = t('shell.loading');
    try {
      const res = await api.get(`/api/conversations/${enc(conversationID)}/pins`);
      const msgs = res?.messages ?? [];
      status.textContent = msgs.length ? '' : t('marks.noPins');
      replace(list, msgs.map((m) => pinEntry(m, log)));
    } catch (err) {
      status.textContent = t('marks.pinsFailed', { reason: err.message ?? '' });
    }
  });
  return el;
}

// pinEntry is one pinned message: who, its text cut short, and a button
// that brings it into view when the transcript shows it.
function pinEntry(m, log) {
  const who = m.role === 'user' ? t('msg.you') : t('msg.agent');
  const text = m.content.length > 140 ? `${m.content.slice(0, 140)}…` : m.content;
  const go = () => {
    const item = log?.querySelector(`li.msg[data-seq="${CSS.escape(String(m.seq))}"]`);
    if (!item) return;
    item.scrollIntoView({ block: 'center' });
    item.classList.add('flash');
    setTimeout(() => item.classList.remove('flash'), 1500);
  };
  return h('button', { type: 'button', class: 'pin-entry', onclick: go }, h('strong', null, who, ': '), text);
}
