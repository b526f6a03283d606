// The conversation list beside the chat: most recent first, grouped by
// date (Today, Yesterday, Previous 7 days, Previous 30 days, then by
// month) in the browser's zone, with search (GET /api/conversations?q=),
// rename (PATCH /api/conversations/{id}) and delete with a confirmation
// (DELETE /api/conversations/{id}). A server without those endpoints
// answers 404 or 405: the control then says the server cannot do it yet.
import { h, errorBox, confirm, menu, replace } from './dom.js';
import { t, locale } from './i18n.js';

const enc = encodeURIComponent;
const DAY = 86400000;

// dateGroup names the group of a conversation updated at iso, seen at
// now: "today", "yesterday", "week", "month", or "YYYY-MM" (older, by
// month), by calendar days in the browser's zone.
export function dateGroup(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return 'older';
  const midnight = (x) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const days = Math.round((midnight(now) - midnight(d)) / DAY);
  if (days <= 0) return 'today';
  if (days === 1) return 'yesterday';
  if (days <= 7) return 'week';
  if (days <= 30) return 'month';
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}`;
}

// groupLabel is a group's heading.
function groupLabel(group) {
  switch (group) {
    case 'today': return t('convs.today');
    case 'yesterday': return t('convs.yesterday');
    case 'week': return t('convs.week');
    case 'month': return t('convs.month');
    case 'older': return t('convs.older');
  }
  const [y, m] = group.split('-').map(Number);
  return new Intl.DateTimeFormat(locale(), { month: 'long', year: 'numeric' }).format(new Date(y, m - 1, 1));
}

// unsupported tells an endpoint the server lacks (an older server).
function unsupported(err) {
  return err?.status === 405 || err?.code === 'http_404';
}

export class Sidebar {
  // on: renamed(conv), deleted(id); current is the open conversation's id.
  constructor(api, current, on = {}) {
    this.api = api;
    this.current = current ?? null;
    this.on = on;
    this.items = [];
    this.query = '';
    this.searches = 0;
    this.timer = 0;
    this.search = h('input', {
      type: 'search', id: 'conv-search', name: 'q', autocomplete: 'off',
      placeholder: t('convs.search'), 'aria-label': t('convs.searchLabel'),
      oninput: () => this.searchSoon(),
      onkeydown: (e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          this.runSearch();
        }
      },
    });
    this.status = h('div', { class: 'form-status', id: 'convs-status', role: 'status' });
    this.list = h('div', { class: 'conv-groups' });
    this.el = h('aside', { class: 'convs', id: 'convs', 'aria-labelledby': 'convs-h' },
      h('div', { class: 'convs-head' },
        h('h2', { id: 'convs-h' }, t('convs.title')),
        h('a', { href: '#/chat', class: 'button primary small new-chat', id: 'new-chat' }, h('span', { 'aria-hidden': 'true' }, '+ '), t('convs.new'))),
      h('div', { class: 'conv-search' }, this.search),
      this.status, this.list);
  }

  // show lists conversations (the API's order; sorted again, newest first).
  show(items) {
    const at = (c) => new Date(c.updated_at).getTime() || 0;
    this.items = [...items].sort((a, b) => at(b) - at(a));
    this.draw();
  }

  draw() {
    if (!this.items.length) {
      replace(this.list, h('p', { class: 'muted empty' }, this.query ? t('convs.noMatch', { q: this.query }) : t('convs.none')));
      return;
    }
    const groups = new Map();
    const now = new Date();
    for (const c of this.items) {
      const g = dateGroup(c.updated_at, now);
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(c);
    }
    replace(this.list, [...groups].map(([g, cs], i) => h('section', { class: 'conv-group', 'data-group': g, 'aria-labelledby': `conv-g${i}` },
      h('h3', { id: `conv-g${i}` }, groupLabel(g)),
      h('ul', { class: 'conv-list' }, cs.map((c) => this.item(c))))));
  }

  item(c) {
    const label = c.title || t('chat.untitled', { agent: c.agent ?? '' });
    const link = h('a', { href: `#/chat/${enc(c.id)}`, 'aria-current': c.id === this.current ? 'page' : null },
      h('span', { class: 'conv-title' }, label));
    const actions = menu('conv-menu', { 'aria-label': t('convs.actions', { title: label }), title: t('convs.actionsShort') },
      h('span', { 'aria-hidden': 'true' }, '⋯'), [
        h('button', { type: 'button', class: 'rename', onclick: () => this.renameForm(li, c) }, t('convs.rename')),
        h('button', { type: 'button', class: 'delete danger', onclick: () => this.remove(c) }, t('convs.delete'))]);
    const li = h('li', { 'data-id': c.id }, link, actions);
    return li;
  }

  // add puts a new conversation at the top and marks it open.
  add(c) {
    this.current = c.id;
    this.items = [c, ...this.items.filter((x) => x.id !== c.id)];
    if (!this.query) this.draw();
  }

  // retitle shows a conversation's new title.
  retitle(c) {
    const x = this.items.find((i) => i.id === c.id);
    if (x) x.title = c.title;
    const span = this.list.querySelector(`li[data-id="${CSS.escape(c.id)}"] .conv-title`);
    if (span) span.textContent = c.title;
  }

  // renameForm edits a title in place: Enter saves, Escape cancels.
  renameForm(li, c) {
    const input = h('input', { type: 'text', value: c.title ?? '', maxlength: 200, 'aria-label': t('convs.newTitle'), class: 'rename-input' });
    const form = h('form', { class: 'rename-form' }, input,
      h('div', { class: 'row' },
        h('button', { type: 'submit', class: 'primary small' }, t('common.save')),
        h('button', { type: 'button', class: 'small', onclick: () => this.draw() }, t('common.cancel'))));
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        this.draw();
        this.list.querySelector(`li[data-id="${CSS.escape(c.id)}"] summary`)?.focus();
      }
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const title = input.value.trim();
      replace(this.status);
      if (!title) {
        this.status.append(errorBox(t('convs.titleEmpty')));
        return;
      }
      try {
        const got = await this.api.patch(`/api/conversations/${enc(c.id)}`, { title });
        const next = { ...c, title: got?.title ?? title };
        this.items = this.items.map((x) => (x.id === c.id ? { ...x, title: next.title } : x));
        this.draw();
        this.on.renamed?.(next);
        this.status.append(h('p', { class: 'ok small' }, t('convs.renamed', { title: next.title })));
      } catch (err) {
        this.status.append(errorBox(unsupported(err) ? t('convs.cannotRename', { status: err.status }) : err.message, unsupported(err) ? null : t('convs.notRenamed')));
      }
    });
    replace(li, form);
    input.focus();
    input.select();
  }

  // remove deletes a conversation after a confirmation.
  async remove(c) {
    const label = c.title || t('chat.untitled', { agent: c.agent ?? '' });
    if (!(await confirm(t('convs.deleteQuestion', { title: label }), t('convs.deleteConfirm')))) return;
    replace(this.status);
    try {
      await this.api.del(`/api/conversations/${enc(c.id)}`);
    } catch (err) {
      this.status.append(errorBox(unsupported(err) ? t('convs.cannotDelete', { status: err.status }) : err.message,
        unsupported(err) ? null : t('convs.notDeleted')));
      return;
    }
    this.items = this.items.filter((x) => x.id !== c.id);
    this.draw();
    this.status.append(h('p', { class: 'ok small' }, t('convs.deleted', { title: label })));
    this.on.deleted?.(c.id);
  }

  // searchSoon searches once typing pauses.
  searchSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runSearch(), 250);
  }

  // runSearch asks the server for the conversations matching the box
  // (by title and by what the person wrote); an empty box lists all. An
  // answer to an older search than the last is dropped.
  async runSearch() {
    clearTimeout(this.timer);
    const q = this.search.value.trim();
    const seq = ++this.searches;
    replace(this.status);
    this.list.setAttribute('aria-busy', 'true');
    try {
      const res = await this.api.get(`/api/conversations${q ? `?q=${enc(q)}` : ''}`);
      if (seq !== this.searches) return;
      this.query = q;
      this.show(res?.conversations ?? res?.items ?? []);
    } catch (err) {
      if (seq !== this.searches) return;
      this.status.append(errorBox(err, t('convs.searchFailed'), () => this.runSearch()));
    } finally {
      if (seq === this.searches) this.list.removeAttribute('aria-busy');
    }
  }
}
