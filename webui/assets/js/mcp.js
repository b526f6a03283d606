// MCP servers (admins): registrations with their status and discovered
// tools, read from storage without contacting the servers; add (after a
// connection test), enable, disable, delete.
import { h, heading, errorBox, when, confirm, replace } from './dom.js';
import { t, tn, tx } from './i18n.js';

const enc = encodeURIComponent;

const TYPES = () => [
  ['general', t('mcp.typeGeneral')],
  ['web_search', t('mcp.typeWebSearch')],
  ['url_fetcher', t('mcp.typeFetcher')],
];

export async function render({ api, me, main }) {
  main.append(heading(t('mcp.title')));
  if (me.role !== 'admin') {
    main.append(h('p', null, t('mcp.adminsOnly')));
    return;
  }
  main.append(h('p', { class: 'lede' }, tx('mcp.lede', { tools: h('code', null, 'tools:'), one: h('code', null, 'server/tool'),
    all: h('code', null, 'server/*'), wire: h('code', null, 'server__tool') })));
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const table = h('div', { class: 'servers' });
  const refresh = async () => {
    const list = (await api.get('/api/mcp-servers'))?.servers ?? [];
    replace(table, serverTable(list, { toggle, remove }));
  };
  const act = async (what, fn) => {
    replace(status);
    try {
      await fn();
      await refresh();
    } catch (err) {
      status.append(errorBox(err, what));
    }
  };
  const toggle = (s) => act(s.enabled ? t('mcp.notDisabled') : t('mcp.notEnabled'),
    () => api.post(`/api/mcp-servers/${enc(s.name)}/${s.enabled ? 'disable' : 'enable'}`));
  const remove = async (s, button) => {
    if (!(await confirm(t('mcp.deleteQuestion', { name: s.name }), t('mcp.deleteServer')))) {
      button.focus();
      return;
    }
    await act(t('common.notDeleted'), async () => {
      await api.del(`/api/mcp-servers/${enc(s.name)}?confirm=true`);
      status.append(h('p', { class: 'ok' }, t('mcp.deleted', { name: s.name })));
    });
    main.querySelector('h1').focus();
  };
  main.append(status, table, addForm(api, status, refresh));
  await refresh();
}

// toolsCell lists the discovered tools by the names models call them
// (server__tool); a name that had to be sanitised or shortened says which
// of the server's tools it is.
function toolsCell(s) {
  if (s.discovery === 'unknown') return h('span', { class: 'muted' }, t('mcp.discoveryUnknown'));
  if (s.discovery === 'none' || !s.names?.length) return h('span', { class: 'muted' }, t('mcp.noneDiscovered'));
  return h('ul', { class: 'names' }, s.names.map((n) => h('li', null, h('code', null, n.name),
    n.name.endsWith(`__${n.tool}`) ? null : h('span', { class: 'muted small' }, ` (${n.tool})`))));
}

function serverTable(list, { toggle, remove }) {
  if (!list.length) return h('p', null, t('mcp.none'));
  const cols = [t('mcp.colName'), t('mcp.colURL'), t('mcp.colType'), t('mcp.colStatus'), t('mcp.colToken'), t('mcp.colTools'), t('mcp.colActions')];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'stack mcp-table' },
    h('caption', null, tn('mcp.registered', list.length)),
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, list.map((s) => {
      const del = h('button', { type: 'button', class: 'danger', 'aria-label': t('mcp.deleteNamed', { name: s.name }) }, t('convs.delete'));
      del.addEventListener('click', () => remove(s, del));
      return h('tr', { 'data-server': s.name },
        h('th', { scope: 'row', 'data-label': cols[0] }, s.name),
        h('td', { 'data-label': cols[1], class: 'url' }, s.url),
        h('td', { 'data-label': cols[2] }, s.type),
        h('td', { 'data-label': cols[3] }, h('span', { class: s.enabled ? 'badge on' : 'badge off' }, s.enabled ? t('mcp.enabled') : t('mcp.disabled'))),
        h('td', { 'data-label': cols[4] }, s.token === 'set' ? t('mcp.tokenSet') : t('mcp.tokenNotSet')),
        h('td', { 'data-label': cols[5], class: 'wide' }, toolsCell(s),
          s.discovered_at ? h('span', { class: 'muted small' }, ` (${when(s.discovered_at)})`) : null),
        h('td', { 'data-label': cols[6], class: 'actions' },
          h('button', { type: 'button', onclick: () => toggle(s),
            'aria-label': s.enabled ? t('mcp.disableNamed', { name: s.name }) : t('mcp.enableNamed', { name: s.name }) },
          s.enabled ? t('mcp.disable') : t('mcp.enable')),
          del));
    }))));
}

function addForm(api, status, refresh) {
  const field = (id, label, input, help) => h('div', { class: 'field' },
    h('label', { for: id }, label), input, help ? h('p', { class: 'muted small', id: `${id}-help` }, help) : null);
  const name = h('input', { id: 'mcp-name', name: 'name', required: true, maxlength: 32, autocomplete: 'off', 'aria-describedby': 'mcp-name-help' });
  const url = h('input', { id: 'mcp-url', name: 'url', type: 'url', required: true, maxlength: 500, placeholder: 'https://mcp.example.com/mcp', autocomplete: 'off' });
  const token = h('input', { id: 'mcp-token', name: 'token', type: 'password', maxlength: 500, autocomplete: 'new-password', 'aria-describedby': 'mcp-token-help' });
  const type = h('select', { id: 'mcp-type', name: 'type' }, TYPES().map(([v, l]) => h('option', { value: v }, l)));
  const submit = h('button', { type: 'submit', class: 'primary' }, t('mcp.testAndAdd'));
  const form = h('form', { class: 'mcp-add', id: 'mcp-add' },
    h('fieldset', null, h('legend', null, t('mcp.add')),
      field('mcp-name', t('mcp.colName'), name, t('mcp.nameHelp')),
      field('mcp-url', t('mcp.colURL'), url),
      field('mcp-token', t('mcp.token'), token, t('mcp.tokenHelp')),
      field('mcp-type', t('mcp.colType'), type),
      h('div', { class: 'row' }, submit)));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status, h('p', { class: 'muted' }, t('mcp.connecting')));
    submit.disabled = true;
    try {
      const body = { name: name.value.trim(), url: url.value.trim(), type: type.value };
      if (token.value) body.token = token.value;
      const s = await api.post('/api/mcp-servers', body);
      const n = s?.tools?.length ?? 0;
      replace(status, h('p', { class: 'ok' }, n ? tn('mcp.added', n, { name: s.name }) : t('mcp.addedNone', { name: s.name })));
      form.reset();
      await refresh();
    } catch (err) {
      replace(status, errorBox(err, t('common.notAdded')));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
