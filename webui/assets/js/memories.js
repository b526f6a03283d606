// Memories (every signed-in user): what agents remember about you, newest
// first (GET /api/memories), searched by words (?q=), each edited in
// place (PATCH /api/memories/{id}: the text is embedded again) or deleted
// after a confirmation (DELETE). Admins also manage the organisation's
// shared memories (?scope=shared), in a second section.
import { h, heading, errorBox, when, confirm, replace } from './dom.js';
import { t } from './i18n.js';

const enc = encodeURIComponent;

// MAX_RUNES is a memory's longest text (store.MaxMemoryRunes).
const MAX_RUNES = 2000;

export async function render({ api, me, main }) {
  main.append(heading(t('memories.title')), h('p', { class: 'lede' }, t('memories.lede')));
  const status = h('div', { class: 'form-status', id: 'memories-status', 'aria-live': 'polite', tabindex: '-1' });
  main.append(status);
  const sections = [section(api, status, 'personal')];
  if (me.role === 'admin') sections.push(section(api, status, 'shared'));
  for (const s of sections) main.append(s.el);
  await Promise.all(sections.map((s) => s.refresh()));
}

// words are a scope's own texts (literal keys, which the catalog tests
// read).
function words(scope) {
  return scope === 'shared'
    ? { heading: t('memories.heading.shared'), search: t('memories.search.shared'), none: t('memories.none.shared') }
    : { heading: t('memories.heading.personal'), search: t('memories.search.personal'), none: t('memories.none.personal') };
}

// section is one scope's search box and list; refresh lists it again.
function section(api, status, scope) {
  const id = `memories-${scope}`;
  const w = words(scope);
  const list = h('div', { id: `${id}-list` });
  const q = h('input', { id: `${id}-q`, type: 'search', name: 'q', maxlength: MAX_RUNES, autocomplete: 'off',
    placeholder: t('memories.searchPlaceholder'), 'aria-label': w.search });
  const search = h('form', { class: 'row memory-search', role: 'search', 'aria-label': w.search },
    q,
    h('button', { type: 'submit', id: `${id}-search` }, t('memories.search')));
  const el = h('section', { class: 'memories', id, 'aria-labelledby': `${id}-h` },
    h('h2', { id: `${id}-h` }, w.heading), search, list);
  let cursor = '';
  const refresh = async (more) => {
    const params = new URLSearchParams({ scope });
    const text = q.value.trim();
    if (text) params.set('q', text);
    if (more && cursor) params.set('cursor', cursor);
    const page = await api.get(`/api/memories?${params}`);
    cursor = page?.next_cursor ?? '';
    const items = page?.memories ?? [];
    if (!more) replace(list);
    if (!more && !items.length) {
      list.append(h('p', { class: 'muted', id: `${id}-none` }, text ? t('memories.noMatch') : w.none));
      return;
    }
    let ul = list.querySelector('ul');
    if (!ul) {
      ul = h('ul', { class: 'memory-list' });
      list.append(ul);
    }
    for (const m of items) ul.append(item(api, status, m, refresh));
    list.querySelector('.more')?.remove();
    if (cursor) {
      const next = h('button', { type: 'button', class: 'more' }, t('memories.more'));
      next.addEventListener('click', () => refresh(true).catch((err) => list.append(errorBox(err, t('memories.notListed')))));
      list.append(next);
    }
  };
  search.addEventListener('submit', (e) => {
    e.preventDefault();
    refresh().catch((err) => replace(list, errorBox(err, t('memories.notListed'))));
  });
  return { el, refresh };
}

// item is one memory: its text with Edit and Delete, or, while edited,
// a text box with Save and Cancel.
function item(api, status, m, refresh) {
  const li = h('li', { class: 'memory', 'data-memory': m.id });
  const show = () => {
    const edit = h('button', { type: 'button', class: 'edit-memory', 'aria-label': t('memories.editNamed', { text: short(m.text) }) }, t('memories.edit'));
    const del = h('button', { type: 'button', class: 'danger delete-memory', 'aria-label': t('memories.deleteNamed', { text: short(m.text) }) }, t('memories.delete'));
    edit.addEventListener('click', editing);
    del.addEventListener('click', () => remove(del));
    replace(li, h('p', { class: 'memory-text' }, m.text),
      h('p', { class: 'muted small' }, m.updated_at !== m.created_at
        ? t('memories.edited', { when: when(m.updated_at) }) : t('memories.saved', { when: when(m.created_at) })),
      h('div', { class: 'row actions' }, edit, del));
  };
  const editing = () => {
    const boxID = `memory-edit-${m.id}`;
    const box = h('textarea', { id: boxID, class: 'memory-edit', rows: 3, maxlength: MAX_RUNES }, m.text);
    const said = h('div', { class: 'form-status', 'aria-live': 'polite' });
    const save = h('button', { type: 'submit', class: 'primary save-memory' }, t('common.save'));
    const cancel = h('button', { type: 'button', class: 'cancel' }, t('common.cancel'));
    const form = h('form', { class: 'memory-form' },
      h('label', { for: boxID }, t('memories.text')), box, h('div', { class: 'row' }, save, cancel), said);
    cancel.addEventListener('click', () => {
      show();
      li.querySelector('.edit-memory').focus();
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      replace(said);
      save.disabled = true;
      try {
        m = await api.patch(`/api/memories/${enc(m.id)}`, { text: box.value });
        show();
        status.replaceChildren(h('p', { class: 'ok' }, t('memories.updated')));
        li.querySelector('.edit-memory').focus();
      } catch (err) {
        said.append(errorBox(err, t('memories.notSaved')));
        save.disabled = false;
      }
    });
    replace(li, form);
    box.focus();
  };
  const remove = async (button) => {
    if (!(await confirm(t('memories.deleteQuestion', { text: short(m.text) }), t('memories.delete')))) {
      button.focus();
      return;
    }
    replace(status);
    try {
      await api.del(`/api/memories/${enc(m.id)}`);
      status.append(h('p', { class: 'ok' }, t('memories.deleted')));
    } catch (err) {
      status.append(errorBox(err, t('memories.notDeleted')));
    }
    await refresh().catch((err) => status.append(errorBox(err, t('memories.notListed'))));
    status.focus();
  };
  show();
  return li;
}

// short is a memory's text cut for a label or a question.
function short(text) {
  const chars = Array.from(text);
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : text;
}
