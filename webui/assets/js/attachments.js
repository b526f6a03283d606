// Files people give a conversation (docs/attachments.md): the composer's
// tray, where each file picked, dropped or pasted is uploaded at once
// (POST /api/conversations/{id}/attachments) and shows as a chip with its
// name, size and state until the message goes; and the transcript's list
// of the files a message went with, each a download link. A conversation
// holds its files (every turn reads them); a file goes with the first
// message sent after it was attached, which is how a stored transcript
// places it (Placement).
import { h, icon, replace } from './dom.js';
import { t, tn, locale } from './i18n.js';

const enc = encodeURIComponent;

// MAX_FILE_BYTES is one file's largest size (store.MaxAttachmentBytes):
// a larger file is refused here, before any byte is sent.
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

// size formats a byte count for people (1024 bytes a kB).
export function size(n) {
  if (n < 1024) return tn('attach.bytes', n);
  const units = [['kilobyte', 1024], ['megabyte', 1024 ** 2], ['gigabyte', 1024 ** 3]];
  let [unit, div] = units[0];
  for (const u of units) if (n >= u[1]) [unit, div] = u;
  return new Intl.NumberFormat(locale(), { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: 1 }).format(n / div);
}

// fileLink is an attachment's name as a link to its bytes (GET …/{id}).
function fileLink(conversationID, a) {
  return h('a', { class: 'file-name', href: `/api/conversations/${enc(conversationID)}/attachments/${enc(a.id)}`, download: a.name }, a.name);
}

// fileList shows the files a message went with: each a download link
// with its size, and a note when its text could not be read.
export function fileList(conversationID, files) {
  return h('ul', { class: 'msg-files', 'aria-label': t('attach.sent') }, files.map((a) => fileItem(conversationID, a)));
}

function fileItem(conversationID, a) {
  return h('li', { class: 'msg-file', 'data-attachment': a.id },
    h('span', { class: 'file-icon', 'aria-hidden': 'true' }, icon('clip')),
    fileLink(conversationID, a), ' ', h('span', { class: 'muted file-size' }, size(a.size)),
    a.status === 'unreadable' ? h('span', { class: 'badge err', title: a.error || null }, t('attach.unreadableShort')) : null);
}

// addFiles adds files to a message's list on screen (making the list
// when it has none).
export function addFiles(item, conversationID, files) {
  if (!files.length) return;
  let list = item.querySelector('.msg-files');
  if (!list) {
    list = fileList(conversationID, []);
    const actions = item.querySelector('.msg-actions');
    if (actions) actions.before(list);
    else item.append(list);
  }
  list.append(...files.map((a) => fileItem(conversationID, a)));
}

// instant makes an API timestamp comparable as text: UTC with nine
// digits of fraction (the API writes as many as the store keeps).
export function instant(iso) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(iso ?? '');
  if (m) return `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}`;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : instant(d.toISOString());
}

// Placement tells which message each of a conversation's files went
// with: the first user message stored at or after it. The transcript
// comes a page at a time, newest first; place takes each page as it is
// shown.
export class Placement {
  constructor(files) {
    this.left = [...(files ?? [])].sort((a, b) => (instant(a.created_at) < instant(b.created_at) ? -1 : 1));
    this.first = true;
  }

  // place takes a page of messages (oldest first; more: older ones
  // exist) and returns byMessage (user message → its files), unsent (the
  // newest page only: files after every message, still to go with the
  // next one) and earlier (an older page: files that went with the
  // earliest message of the pages before). Files that may belong to a
  // message on an older page wait for it.
  place(messages, more) {
    const users = messages.filter((m) => m.role === 'user');
    const out = { byMessage: new Map(), unsent: [], earlier: [] };
    const keep = [];
    for (const a of this.left) {
      const at = instant(a.created_at);
      const u = users.find((m) => instant(m.created_at) >= at);
      if (!u) {
        (this.first ? out.unsent : out.earlier).push(a);
      } else if (u === users[0] && more) {
        keep.push(a);
      } else {
        if (!out.byMessage.has(u)) out.byMessage.set(u, []);
        out.byMessage.get(u).push(a);
      }
    }
    this.left = keep;
    this.first = false;
    return out;
  }
}

// Tray is the composer's files: el is its list (ul#attachments), live a
// status element that announces each file's outcome. opts:
// conversation() resolves the id to attach to (a new chat's conversation
// is stored then), changed() runs when the tray changes, focus() when its
// last chip is removed (focus goes back to the message box).
export class Tray {
  constructor(api, el, live, opts) {
    this.api = api;
    this.el = el;
    this.live = live;
    this.opts = opts;
    this.chips = [];
    this.count = 0;
  }

  // add uploads each file, one chip each.
  add(files) {
    for (const f of files ?? []) this.upload(f);
  }

  // pending reports whether a file is still uploading.
  pending() {
    return this.chips.some((c) => c.state === 'uploading');
  }

  // take returns the stored files and empties the tray (a refused file's
  // chip goes too: it was never stored).
  take() {
    const out = this.chips.filter((c) => c.att).map((c) => c.att);
    for (const c of this.chips) c.el.remove();
    this.chips = [];
    this.shown();
    return out;
  }

  // restore shows stored files again, ready to go with the next message
  // (a message refused, or files attached and not sent before a reload).
  restore(atts) {
    for (const a of atts ?? []) {
      const c = this.chip(a.name, a.size);
      this.stored(c, a);
    }
  }

  chip(name, bytes) {
    const id = `attach-${++this.count}`;
    const c = { state: 'uploading', att: null, abort: new AbortController() };
    c.stateEl = h('span', { class: 'attach-state', id: `${id}-state` });
    c.bar = h('progress', { max: 100, value: 0, 'aria-labelledby': `${id}-name ${id}-state` });
    c.note = h('span', { class: 'attach-note' });
    c.remove = h('button', { type: 'button', class: 'attach-remove', 'aria-label': t('attach.remove', { name }),
      onclick: () => this.drop(c) }, h('span', { 'aria-hidden': 'true' }, '×'));
    c.el = h('li', { class: 'attach-chip', 'data-name': name, 'data-state': 'uploading' },
      h('span', { class: 'file-icon', 'aria-hidden': 'true' }, icon('clip')),
      h('span', { class: 'attach-name', id: `${id}-name` }, name),
      h('span', { class: 'attach-size muted' }, size(bytes)),
      c.stateEl, c.bar, c.remove, c.note);
    this.chips.push(c);
    this.el.append(c.el);
    this.shown();
    return c;
  }

  set(c, state, text) {
    c.state = state;
    c.el.dataset.state = state;
    c.stateEl.textContent = text;
    c.bar.hidden = state !== 'uploading';
  }

  async upload(file) {
    const c = this.chip(file.name, file.size);
    c.announce = true;
    this.set(c, 'uploading', t('attach.uploading', { percent: 0 }));
    if (file.size > MAX_FILE_BYTES) {
      this.refused(c, t('attach.tooLarge', { name: file.name, size: size(file.size), limit: size(MAX_FILE_BYTES) }));
      return;
    }
    try {
      const id = await this.opts.conversation();
      const form = new FormData();
      form.append('file', file, file.name);
      const att = await this.api.upload(`/api/conversations/${enc(id)}/attachments`, form, (sent, total) => {
        if (!total || c.state !== 'uploading') return;
        const percent = Math.min(99, Math.floor((sent / total) * 100));
        c.bar.value = percent;
        c.stateEl.textContent = t('attach.uploading', { percent });
      }, c.abort.signal);
      this.stored(c, att);
    } catch (err) {
      if (err?.name === 'AbortError') return;
      this.refused(c, t('attach.refused', { name: file.name, reason: err?.message ?? String(err) }));
    }
  }

  // stored shows a chip's file as stored: ready, or stored but unreadable
  // with the reason.
  stored(c, att) {
    c.att = att;
    if (att.status === 'unreadable') {
      this.set(c, 'unreadable', t('attach.unreadableShort'));
      replace(c.note, h('span', { class: 'attach-error' }, t('attach.unreadable', { name: att.name, reason: att.error || '' })));
    } else {
      this.set(c, 'ready', t('attach.ready'));
    }
    if (c.announce) this.live.textContent = t('attach.readyNamed', { name: att.name });
    this.opts.changed?.();
  }

  // refused shows why a file is not attached, in one line.
  refused(c, line) {
    this.set(c, 'error', t('attach.notAttached'));
    replace(c.note, h('span', { class: 'attach-error', role: 'alert' }, line));
    this.opts.changed?.();
  }

  // drop takes a chip off the tray: an upload is stopped, a stored file
  // deleted (a failure to delete keeps the chip and says why).
  async drop(c) {
    if (c.state === 'uploading') c.abort.abort();
    if (c.att) {
      c.remove.disabled = true;
      try {
        const id = await this.opts.conversation();
        await this.api.del(`/api/conversations/${enc(id)}/attachments/${enc(c.att.id)}`);
      } catch (err) {
        c.remove.disabled = false;
        replace(c.note, h('span', { class: 'attach-error', role: 'alert' }, t('attach.notRemoved', { name: c.att.name, reason: err.message })));
        return;
      }
    }
    const i = this.chips.indexOf(c);
    const next = this.chips[i + 1] ?? this.chips[i - 1];
    this.chips.splice(i, 1);
    c.el.remove();
    this.shown();
    if (next) next.remove.focus();
    else this.opts.focus?.();
    this.opts.changed?.();
  }

  shown() {
    this.el.hidden = this.chips.length === 0;
  }
}
