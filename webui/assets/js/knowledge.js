// Knowledge on the agent page (docs/knowledge.md): the agent's documents
// with their state (GET /api/agents/{name}/knowledge: indexing with its
// chunks of total, ready with its chunks, failed with the reason), read
// again every second while one is indexing; admins add files (a button,
// or dropped on the section; one request each, POST …/knowledge, indexed
// before the answer) and remove a document after a confirmation (DELETE
// …/knowledge/{id}).
import { h, errorBox, confirm, replace, number } from './dom.js';
import { t, tn } from './i18n.js';
import { size } from './attachments.js';

const enc = encodeURIComponent;

// MAX_FILE_BYTES is one document's largest size (store.MaxKnowledgeFileBytes).
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

// POLL_MS is how often the list is read again while a document indexes.
const POLL_MS = 1000;

// knowledgeSection is the agent's knowledge: its element and the first
// listing.
export function knowledgeSection(api, admin, agent) {
  const base = `/api/agents/${enc(agent)}/knowledge`;
  const status = h('div', { class: 'form-status', id: 'knowledge-status', 'aria-live': 'polite', tabindex: '-1' });
  const uploads = h('ul', { class: 'knowledge-uploads', id: 'knowledge-uploads', 'aria-label': t('knowledge.uploads'), hidden: true });
  const list = h('div', { id: 'knowledge-list' });
  const el = h('section', { class: 'knowledge', id: 'knowledge', 'aria-labelledby': 'knowledge-h' },
    h('h2', { id: 'knowledge-h' }, t('knowledge.title')),
    h('p', { class: 'muted' }, t('knowledge.lede')));
  let timer = 0;

  const refresh = async () => {
    clearTimeout(timer);
    timer = 0;
    let docs;
    try {
      docs = (await api.get(base))?.documents ?? [];
    } catch (err) {
      replace(list, err.status === 501 ? h('p', { class: 'muted', id: 'knowledge-off' }, t('knowledge.off'))
        : errorBox(err, t('knowledge.notListed'), refresh));
      return;
    }
    show(docs);
    if (docs.some((d) => d.status === 'indexing')) timer = setTimeout(() => el.isConnected && refresh(), POLL_MS);
  };

  const show = (docs) => {
    if (!docs.length) {
      replace(list, h('p', { class: 'muted', id: 'knowledge-none' }, t('knowledge.none')));
      return;
    }
    replace(list, h('div', { class: 'table-wrap' }, h('table', { class: 'stack knowledge-table' },
      h('caption', { class: 'sr-only' }, t('knowledge.caption', { agent })),
      h('thead', null, h('tr', null,
        h('th', { scope: 'col' }, t('knowledge.name')), h('th', { scope: 'col' }, t('knowledge.size')),
        h('th', { scope: 'col' }, t('knowledge.state')), admin ? h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, t('knowledge.actions'))) : null)),
      h('tbody', null, docs.map(row)))));
  };

  const row = (d) => h('tr', { 'data-document': d.id, 'data-status': d.status },
    h('td', { 'data-label': t('knowledge.name'), class: 'wide' }, d.name),
    h('td', { 'data-label': t('knowledge.size') }, size(d.size)),
    h('td', { 'data-label': t('knowledge.state'), class: 'knowledge-state' }, state(d)),
    admin ? h('td', { class: 'actions' }, h('button', { type: 'button', class: 'danger small remove-document',
      'aria-label': t('knowledge.removeNamed', { name: d.name }), onclick: (e) => remove(d, e.currentTarget) }, t('knowledge.remove'))) : null);

  const remove = async (d, button) => {
    if (!(await confirm(t('knowledge.removeQuestion', { name: d.name }), t('knowledge.remove')))) {
      button.focus();
      return;
    }
    replace(status);
    try {
      await api.del(`${base}/${enc(d.id)}`);
      status.append(h('p', { class: 'ok' }, t('knowledge.removed', { name: d.name })));
    } catch (err) {
      status.append(errorBox(err, t('knowledge.notRemoved')));
    }
    await refresh();
    status.focus();
  };

  // add uploads each file in its own request, one after the other, so
  // that one refused file (too large, the agent full) leaves the others
  // added.
  const add = async (files) => {
    replace(status);
    const queued = [...files].map((f) => {
      const line = h('li', { class: 'knowledge-upload', 'data-name': f.name }, t('knowledge.queued', { name: f.name }));
      uploads.append(line);
      return { f, line };
    });
    uploads.hidden = !uploads.children.length;
    for (const { f, line } of queued) {
      const text = h('span', null, t('knowledge.uploading', { name: f.name, percent: 0 }));
      const bar = h('progress', { max: 100, value: 0, 'aria-label': f.name });
      replace(line, text, ' ', bar);
      try {
        if (f.size > MAX_FILE_BYTES) throw new Error(t('knowledge.tooLarge', { size: size(f.size), limit: size(MAX_FILE_BYTES) }));
        const form = new FormData();
        form.append('files', f, f.name);
        const res = await api.upload(base, form, (sent, total) => {
          if (!total) return;
          const percent = Math.min(99, Math.floor((sent / total) * 100));
          bar.value = percent;
          text.textContent = sent < total ? t('knowledge.uploading', { name: f.name, percent }) : t('knowledge.indexingUpload', { name: f.name });
        });
        for (const d of res?.documents ?? []) {
          status.append(d.status === 'failed'
            ? h('p', { class: 'alert', role: 'alert' }, t('knowledge.failedNamed', { name: d.name, reason: d.reason || '' }))
            : h('p', { class: 'ok' }, tn('knowledge.added', d.chunks, { name: d.name })));
        }
      } catch (err) {
        status.append(h('p', { class: 'alert', role: 'alert' }, t('knowledge.notAdded', { name: f.name, reason: err.message })));
      } finally {
        line.remove();
        uploads.hidden = !uploads.children.length;
      }
      await refresh(); // the list grows as each file is done
    }
  };

  if (admin) {
    const picker = h('input', { type: 'file', id: 'knowledge-input', multiple: true, hidden: true, tabindex: '-1',
      onchange: () => {
        const files = [...picker.files];
        picker.value = '';
        add(files);
      } });
    const button = h('button', { type: 'button', id: 'knowledge-add', class: 'primary', onclick: () => picker.click() }, t('knowledge.add'));
    const zone = h('div', { class: 'knowledge-drop', id: 'knowledge-drop' },
      button, picker, h('span', { class: 'muted' }, t('knowledge.dropHint')));
    dropZone(el, zone, add);
    el.append(zone);
  }
  el.append(uploads, status, list);
  // Listing runs in the background: the editor shows at once.
  refresh();
  return el;
}

// state says where a document stands, in words and, while it indexes,
// with a progress bar.
function state(d) {
  switch (d.status) {
    case 'indexing':
      return [h('span', { class: 'badge warn' }, t('knowledge.indexing')), ' ',
        d.total ? t('knowledge.progress', { chunks: number(d.chunks), total: number(d.total) }) : '',
        d.total ? h('progress', { max: d.total, value: d.chunks, 'aria-label': t('knowledge.progressLabel', { name: d.name }) }) : null];
    case 'failed':
      return [h('span', { class: 'badge err' }, t('knowledge.failed')), ' ', h('span', { class: 'knowledge-reason' }, d.reason || '')];
    default:
      return [h('span', { class: 'badge on' }, t('knowledge.ready')), ' ', tn('knowledge.chunks', d.chunks)];
  }
}

// dropZone takes files dropped on the section.
function dropZone(el, zone, add) {
  const files = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  el.addEventListener('dragover', (e) => {
    if (!files(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    zone.classList.add('dropping');
  });
  el.addEventListener('dragleave', (e) => {
    if (!el.contains(e.relatedTarget)) zone.classList.remove('dropping');
  });
  el.addEventListener('drop', (e) => {
    if (!files(e)) return;
    e.preventDefault();
    zone.classList.remove('dropping');
    add(e.dataTransfer.files);
  });
}
