// MCP servers (admins): registrations with their status and discovered
// tools, read from storage without contacting the servers; add (after a
// connection test), enable, disable, delete.
import { h, heading, errorBox, when, confirm, replace } from './dom.js';

const enc = encodeURIComponent;

const TYPES = [
  ['general', 'General: its tools join turns by allowlist'],
  ['web_search', 'Web search: replaces the built-in web_search'],
  ['url_fetcher', 'URL fetcher: replaces the built-in fetch_url'],
];

export async function render({ api, me, main }) {
  main.append(heading('MCP servers'));
  if (me.role !== 'admin') {
    main.append(h('p', null, 'Only admins of your organisation manage MCP servers.'));
    return;
  }
  main.append(h('p', { class: 'lede' }, 'Remote MCP servers whose tools your agents may use (name them in an agent\'s ',
    h('code', null, 'tools:'), ' as ', h('code', null, 'server/tool'), ' or ', h('code', null, 'server/*'),
    '); models call them by the names listed here, ', h('code', null, 'server__tool'),
    '. This list is read from storage; the servers are not contacted to show it.'));
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
  const toggle = (s) => act(s.enabled ? 'Not disabled' : 'Not enabled',
    () => api.post(`/api/mcp-servers/${enc(s.name)}/${s.enabled ? 'disable' : 'enable'}`));
  const remove = async (s, button) => {
    if (!(await confirm(`Delete the MCP server “${s.name}”? Its tools leave every agent's turns. This is not undone.`, 'Delete server'))) {
      button.focus();
      return;
    }
    await act('Not deleted', async () => {
      await api.del(`/api/mcp-servers/${enc(s.name)}?confirm=true`);
      status.append(h('p', { class: 'ok' }, `Deleted “${s.name}”.`));
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
  if (s.discovery === 'unknown') return h('span', { class: 'muted' }, 'Discovery unknown');
  if (s.discovery === 'none' || !s.names?.length) return h('span', { class: 'muted' }, 'None discovered');
  return h('ul', { class: 'names' }, s.names.map((n) => h('li', null, h('code', null, n.name),
    n.name.endsWith(`__${n.tool}`) ? null : h('span', { class: 'muted small' }, ` (${n.tool})`))));
}

function serverTable(list, { toggle, remove }) {
  if (!list.length) return h('p', null, 'No MCP servers are registered.');
  return h('div', { class: 'table-wrap' }, h('table', { class: 'stack mcp-table' },
    h('caption', null, `${list.length} registered`),
    h('thead', null, h('tr', null, ['Name', 'URL', 'Type', 'Status', 'Token', 'Tools', 'Actions']
      .map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, list.map((s) => {
      const del = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${s.name}` }, 'Delete');
      del.addEventListener('click', () => remove(s, del));
      return h('tr', { 'data-server': s.name },
        h('th', { scope: 'row', 'data-label': 'Name' }, s.name),
        h('td', { 'data-label': 'URL', class: 'url' }, s.url),
        h('td', { 'data-label': 'Type' }, s.type),
        h('td', { 'data-label': 'Status' }, h('span', { class: s.enabled ? 'badge on' : 'badge off' }, s.enabled ? 'Enabled' : 'Disabled')),
        h('td', { 'data-label': 'Token' }, s.token === 'set' ? 'Set' : 'Not set'),
        h('td', { 'data-label': 'Tools', class: 'wide' }, toolsCell(s),
          s.discovered_at ? h('span', { class: 'muted small' }, ` (${when(s.discovered_at)})`) : null),
        h('td', { 'data-label': 'Actions', class: 'actions' },
          h('button', { type: 'button', onclick: () => toggle(s), 'aria-label': `${s.enabled ? 'Disable' : 'Enable'} ${s.name}` },
            s.enabled ? 'Disable' : 'Enable'),
          del));
    }))));
}

function addForm(api, status, refresh) {
  const field = (id, label, input, help) => h('div', { class: 'field' },
    h('label', { for: id }, label), input, help ? h('p', { class: 'muted small', id: `${id}-help` }, help) : null);
  const name = h('input', { id: 'mcp-name', name: 'name', required: true, maxlength: 32, autocomplete: 'off', 'aria-describedby': 'mcp-name-help' });
  const url = h('input', { id: 'mcp-url', name: 'url', type: 'url', required: true, maxlength: 500, placeholder: 'https://mcp.example.com/mcp', autocomplete: 'off' });
  const token = h('input', { id: 'mcp-token', name: 'token', type: 'password', maxlength: 500, autocomplete: 'new-password', 'aria-describedby': 'mcp-token-help' });
  const type = h('select', { id: 'mcp-type', name: 'type' }, TYPES.map(([v, l]) => h('option', { value: v }, l)));
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Test and add');
  const form = h('form', { class: 'mcp-add', id: 'mcp-add' },
    h('fieldset', null, h('legend', null, 'Add a server'),
      field('mcp-name', 'Name', name, 'Letters, digits and hyphens, up to 32; agents name its tools “name/tool”.'),
      field('mcp-url', 'URL', url),
      field('mcp-token', 'Auth token (optional)', token, 'Sent to the server as a bearer token; stored encrypted and never shown again.'),
      field('mcp-type', 'Type', type),
      h('div', { class: 'row' }, submit)));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status, h('p', { class: 'muted' }, 'Connecting to the server and discovering its tools…'));
    submit.disabled = true;
    try {
      const body = { name: name.value.trim(), url: url.value.trim(), type: type.value };
      if (token.value) body.token = token.value;
      const s = await api.post('/api/mcp-servers', body);
      const n = s?.tools?.length ?? 0;
      replace(status, h('p', { class: 'ok' }, `Added “${s.name}”: ${n ? `${n} tool${n === 1 ? '' : 's'} discovered` : 'no tools discovered'}.`));
      form.reset();
      await refresh();
    } catch (err) {
      replace(status, errorBox(err, 'Not added'));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
