// Settings (admins): the organisation's feature switches, network mode,
// web search engines, write-only keys and connections to its own
// OpenAI-compatible model servers (each with Test connection, which lists
// the models the server reports). Save sends all of it with the version
// it was read at; a save on top of someone else's is refused (409
// conflict) and the page shows what is stored now. Deliberate Tool Mode
// follows, with its own form (deliberate.js).
import { h, heading, errorBox, field, when, replace } from './dom.js';
import * as deliberate from './deliberate.js';
import { t, tn, tx } from './i18n.js';

const MODES = () => ({
  public: [t('settings.public'), t('settings.publicHelp')],
  'self-hosted': [t('settings.selfHosted'), t('settings.selfHostedHelp')],
});

export async function render({ api, me, main }) {
  main.append(heading(t('settings.title')));
  if (me.role !== 'admin') {
    main.append(h('p', null, t('settings.adminsOnly')));
    return;
  }
  main.append(h('p', { class: 'lede' }, t('settings.lede')));
  const status = h('div', { class: 'form-status', id: 'settings-status', 'aria-live': 'polite', tabindex: '-1' });
  const holder = h('div');
  const show = (s) => replace(holder, settingsForm(s, save, api));
  // save sends an update; its outcome is said in status, and the form is
  // rebuilt from what the server stores now (which also empties the key
  // fields) unless the server refused the update itself.
  const save = async (update, button) => {
    replace(status);
    button.disabled = true;
    try {
      const saved = await api.put('/api/settings', update);
      show(saved);
      status.append(h('p', { class: 'ok' }, t('settings.saved')));
    } catch (err) {
      button.disabled = false;
      if (err.status !== 409) {
        status.append(errorBox(err, t('common.notSaved')));
        status.focus();
        return;
      }
      status.append(h('p', { class: 'alert', role: 'alert' }, t('settings.conflict')));
      try {
        show(await api.get('/api/settings'));
      } catch (again) {
        status.append(errorBox(again, t('settings.reloadFailed')));
      }
    }
    status.focus();
  };
  main.append(status, holder);
  // Both are read at once; the Deliberate Tool Mode section catches its
  // own failure.
  const dtm = deliberate.section(api);
  show(await api.get('/api/settings'));
  main.append(await dtm);
}

// settingsForm lays out one version of the settings; submitting it calls
// save(update, button). api serves the connections' tests.
function settingsForm(s, save, api) {
  const info = Object.fromEntries((s.switch_info ?? []).map((i) => [i.name, i]));
  const switches = (s.switch_names ?? []).map((n) => switchRow(n, s.switches?.[n], info[n]));
  const keys = (s.keys ?? []).map(keyRow);
  const web = webFields(s.web ?? {});
  const modes = s.network_modes ?? [];
  const names = MODES();
  // The mode the form shows now, which a connection test uses.
  const mode = () => form.querySelector('input[name="network_mode"]:checked')?.value ?? s.network_mode;
  const conns = connectionsFields(s, api, mode);
  const submit = h('button', { type: 'submit', class: 'primary', id: 'settings-save' }, t('settings.save'));
  const form = h('form', { class: 'settings-form', id: 'settings-form', 'aria-label': t('settings.title') },
    h('fieldset', { class: 'switches' }, h('legend', null, t('settings.switches')),
      h('p', { class: 'muted small' }, t('settings.switchesHelp')),
      h('p', { class: 'muted small', id: 'settings-embedding' }, embeddingText(s.embedding_model)),
      switches.length ? h('div', { class: 'switch-list' }, switches.map((r) => r.el)) : h('p', null, t('settings.noSwitches'))),
    h('fieldset', { class: 'modes' }, h('legend', null, t('settings.network')),
      modes.map((m) => h('div', { class: 'choice' },
        h('input', { type: 'radio', name: 'network_mode', id: `mode-${m}`, value: m, required: true,
          checked: m === s.network_mode, 'aria-describedby': `mode-${m}-help` }),
        h('label', { for: `mode-${m}` }, names[m]?.[0] ?? m),
        h('p', { class: 'muted small', id: `mode-${m}-help` }, names[m]?.[1] ?? ''))),
      modes.includes('self-hosted') ? null
        : h('p', { class: 'muted small' }, tx('settings.publicOnly', { key: h('code', null, 'network.mode') }))),
    web.el,
    h('fieldset', { class: 'keys' }, h('legend', null, t('settings.keys')),
      h('p', { class: 'muted small' }, t('settings.keysHelp')),
      keys.map((k) => k.el)),
    conns.el,
    h('div', { class: 'row' }, submit,
      h('span', { class: 'muted small' }, s.version
        ? t('settings.version', { version: s.version, when: when(s.updated_at) })
        : t('settings.neverSaved'))));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const update = {
      version: s.version,
      switches: Object.fromEntries(switches.filter((r) => r.value() !== undefined).map((r) => [r.name, r.value()])),
      network_mode: mode(),
      web: web.value(),
      connections: conns.value(),
    };
    const set = keys.filter((k) => k.value()).map((k) => [k.name, k.value()]);
    const clear = keys.filter((k) => k.clearing()).map((k) => k.name);
    if (set.length) update.set_keys = Object.fromEntries(set);
    if (clear.length) update.clear_keys = clear;
    save(update, submit);
  });
  return form;
}

// humanize turns a switch name into words: self_teaching → Self teaching.
function humanize(name) {
  const s = name.replaceAll('_', ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// switchRow is one feature switch: a checkbox that is mixed while the
// switch is not set, and Unset to return it there, with what the switch
// does (info, from switch_info). A switch with no tool behind it yet
// (info.no_tool: its family has no tool in the catalog) is marked "No
// tool yet" and not offered: its checkbox is disabled, its description
// says it changes nothing — the engine's rule: a family switch only takes
// its family's tools out, and its capability:NAME is never true while
// the family has none — and only Unset remains for one saved before.
// value() is true, false, or undefined (not set: left out of the
// update).
function switchRow(name, initial, info) {
  const id = `switch-${name}`;
  let set = typeof initial === 'boolean';
  const inert = info?.no_tool === true;
  const box = h('input', { type: 'checkbox', id, checked: initial === true, disabled: inert,
    'aria-describedby': `${id}-state ${id}-effect` });
  const state = h('span', { class: 'muted small switch-state', id: `${id}-state` });
  const effect = h('span', { class: 'muted small switch-effect', id: `${id}-effect` },
    inert ? t('settings.noTool', { family: info.family || name, name }) : (info?.effect ?? ''));
  const unset = h('button', { type: 'button', class: 'link small', 'aria-label': t('settings.unsetNamed', { name }) }, t('settings.unset'));
  const show = () => {
    box.indeterminate = !set;
    unset.hidden = !set;
    state.textContent = !set ? t('settings.notSet') : box.checked ? t('settings.on') : t('settings.off');
  };
  box.addEventListener('change', () => { set = true; show(); });
  unset.addEventListener('click', () => {
    set = false;
    box.checked = false;
    show();
    box.focus();
  });
  show();
  return {
    name,
    value: () => (set ? box.checked : undefined),
    el: h('div', { class: inert ? 'switch no-tool' : 'switch', 'data-switch': name }, box,
      h('label', { for: id }, humanize(name), inert ? h('span', { class: 'badge off no-tool-badge' }, t('settings.noToolBadge')) : null,
        ' ', h('code', null, name)),
      h('span', { class: 'switch-side' }, state, unset), effect),
  };
}

// webFields are the web search settings; value() reads them back.
function webFields(w) {
  const check = (id, label, on) => {
    const box = h('input', { type: 'checkbox', id, checked: Boolean(on) });
    return { box, el: h('div', { class: 'check' }, box, h('label', { for: id }, label)) };
  };
  const url = (id, value) => h('input', { id, type: 'url', maxlength: 500, value: value ?? '', autocomplete: 'off',
    spellcheck: 'false', placeholder: 'https://…' });
  const disabled = check('web-disabled', t('settings.webOff'), w.disabled);
  const searxng = url('web-searxng', w.searxng_url);
  const iask = url('web-iask', w.iask_url);
  const ddg = check('web-ddg-disabled', t('settings.ddgOff'), w.duckduckgo_disabled);
  // exclude_providers names model providers (not engines) whose turns
  // never get a web tool, e.g. a local model that handles them badly.
  const exclude = h('input', { id: 'web-exclude', type: 'text', maxlength: 300, autocomplete: 'off',
    spellcheck: 'false', placeholder: 'ollama, novelai', value: (w.exclude_providers ?? []).join(', ') });
  return {
    el: h('fieldset', { class: 'web' }, h('legend', null, t('settings.web')),
      h('p', { class: 'muted small' }, t('settings.webHelp')),
      disabled.el,
      field('web-searxng', t('settings.searxng'), searxng, t('settings.searxngHelp')),
      field('web-iask', t('settings.iask'), iask, t('settings.iaskHelp')),
      ddg.el,
      field('web-exclude', t('settings.exclude'), exclude, t('settings.excludeHelp'))),
    value: () => ({
      disabled: disabled.box.checked,
      searxng_url: searxng.value.trim(),
      iask_url: iask.value.trim(),
      duckduckgo_disabled: ddg.box.checked,
      exclude_providers: exclude.value.split(',').map((n) => n.trim()).filter(Boolean),
    }),
  };
}

function keyState(k) {
  if (!k.set) return t('settings.notSet');
  return k.source ? t('settings.setFrom', { source: k.source }) : t('settings.set');
}

// keyRow is one write-only key: a password field for a new value, its
// state, and Clear for a key saved here. value() is the new value ("" for
// none); clearing() whether it is to be removed.
function keyRow(k) {
  const id = `key-${k.name}`;
  const input = h('input', { type: 'password', id, autocomplete: 'new-password', spellcheck: 'false', autocapitalize: 'off',
    maxlength: 500, placeholder: k.set ? t('settings.keyReplace') : t('settings.keySet'), 'aria-describedby': `${id}-state` });
  const state = h('span', { class: 'key-state', id: `${id}-state` }, keyState(k));
  let clearing = false;
  let clear = null;
  if (k.source === 'settings') {
    clear = h('button', { type: 'button', class: 'secondary', 'aria-label': t('settings.clearNamed', { name: k.label }) }, t('settings.clear'));
    clear.addEventListener('click', () => {
      clearing = !clearing;
      input.value = '';
      input.disabled = clearing;
      clear.textContent = clearing ? t('settings.keep') : t('settings.clear');
      clear.setAttribute('aria-label', clearing ? t('settings.keepNamed', { name: k.label }) : t('settings.clearNamed', { name: k.label }));
      state.textContent = clearing ? t('settings.clearedOnSave', { state: keyState(k) }) : keyState(k);
    });
  }
  return {
    name: k.name,
    value: () => (clearing ? '' : input.value.trim()),
    clearing: () => clearing,
    el: h('div', { class: 'key', 'data-key': k.name },
      h('label', { for: id }, k.label || k.name, ' ', h('code', null, k.name)),
      h('div', { class: 'row' }, input, clear),
      h('p', { class: 'muted small' }, state)),
  };
}

// PRESETS are the servers Add connection offers, with the name agents
// use and the base URL such a server has on the machine it runs on.
const PRESETS = () => [
  ['ollama', 'Ollama', 'ollama', 'http://localhost:11434'],
  ['lmstudio', 'LM Studio', 'lmstudio', 'http://localhost:1234/v1'],
  ['vllm', 'vLLM', 'vllm', 'http://localhost:8000/v1'],
  ['llamacpp', t('conn.llamacpp'), 'llamacpp', 'http://localhost:8080/v1'],
  ['other', t('conn.otherServer'), '', ''],
];

// connectionsFields are the organisation's model servers: one row per
// connection and Add connection; value() is the update's connections
// (rows removed are left out, which removes them). mode() is the network
// mode the form shows, which a test uses.
function connectionsFields(s, api, mode) {
  let n = 0;
  const rows = [];
  const list = h('div', { class: 'connection-list' });
  const none = h('p', { class: 'muted small', id: 'connections-none' }, t('conn.none'));
  const sync = () => { none.hidden = rows.length > 0; };
  const add = (c, fresh) => {
    const row = connectionRow(c, ++n, api, mode, fresh, () => {
      rows.splice(rows.indexOf(row), 1);
      row.el.remove();
      sync();
      pick.focus();
    });
    rows.push(row);
    list.append(row.el);
    sync();
    return row;
  };
  for (const c of s.connections ?? []) add(c, false);
  const presets = PRESETS();
  const pick = h('select', { id: 'connection-preset', class: 'narrow', 'aria-label': t('conn.serverToAdd') },
    presets.map(([v, label]) => h('option', { value: v }, label)));
  const addButton = h('button', { type: 'button', id: 'connection-add' }, t('conn.add'));
  addButton.addEventListener('click', () => {
    const [, , name, url] = presets.find(([v]) => v === pick.value) ?? presets[presets.length - 1];
    const taken = new Set(rows.map((r) => r.name()));
    let unique = name;
    for (let i = 2; unique && taken.has(unique); i++) unique = `${name}${i}`;
    add({ name: unique, base_url: url }, true).focus();
  });
  const server = s.server_connections ?? [];
  sync();
  return {
    el: h('fieldset', { class: 'connections', id: 'connections' }, h('legend', null, t('conn.legend')),
      h('p', { class: 'muted small' }, tx('conn.help', { example: h('code', null, 'lmstudio:qwen3-8b') })),
      server.length ? h('p', { class: 'muted small', id: 'server-connections' }, tx('conn.serverAlso', {
        names: h('span', null, server.map((name, i) => [i ? ', ' : '', h('code', null, name)])) })) : null,
      none, list,
      h('div', { class: 'row' }, pick, addButton)),
    value: () => rows.map((r) => r.value()),
  };
}

// connectionRow is one connection: its name, base URL and write-only key,
// Test connection (its outcome, or the models the server reports, beneath)
// and Remove. fresh marks one added now, not saved yet.
function connectionRow(c, n, api, mode, fresh, remove) {
  const id = `conn-${n}`;
  const name = h('input', { id: `${id}-name`, value: c.name ?? '', maxlength: 32, autocomplete: 'off', spellcheck: 'false',
    autocapitalize: 'off', required: true, placeholder: 'lmstudio', 'aria-describedby': `${id}-name-help` });
  const url = h('input', { id: `${id}-url`, type: 'url', value: c.base_url ?? '', maxlength: 500, autocomplete: 'off',
    spellcheck: 'false', required: true, placeholder: 'http://localhost:1234/v1', 'aria-describedby': `${id}-url-help` });
  const key = h('input', { id: `${id}-key`, type: 'password', autocomplete: 'new-password', spellcheck: 'false',
    autocapitalize: 'off', maxlength: 500, placeholder: c.key_set ? t('conn.keyReplace') : t('conn.optional'),
    'aria-describedby': `${id}-key-state` });
  const keyState = h('span', { class: 'key-state', id: `${id}-key-state` }, c.key_set ? t('conn.keySet') : t('conn.noKey'));
  let clearing = false;
  let clear = null;
  if (c.key_set) {
    clear = h('button', { type: 'button', class: 'secondary', id: `${id}-clear` }, t('conn.clearKey'));
    clear.addEventListener('click', () => {
      clearing = !clearing;
      key.value = '';
      key.disabled = clearing;
      clear.textContent = clearing ? t('conn.keepKey') : t('conn.clearKey');
      keyState.textContent = clearing ? t('conn.keyCleared') : t('conn.keySet');
    });
  }
  const out = h('div', { class: 'connection-result', id: `${id}-result`, 'aria-live': 'polite' });
  const test = h('button', { type: 'button', class: 'connection-test', id: `${id}-test` }, t('conn.test'));
  test.addEventListener('click', async () => {
    replace(out, h('p', { class: 'muted small' }, t('conn.asking')));
    test.disabled = true;
    try {
      const body = { name: name.value.trim(), base_url: url.value.trim(), network_mode: mode() };
      if (key.value.trim() && !clearing) body.key = key.value.trim();
      replace(out, modelList(body.name, await api.post('/api/settings/connections/test', body)));
    } catch (err) {
      replace(out, errorBox(err, t('conn.failed')));
    } finally {
      test.disabled = false;
    }
  });
  const del = h('button', { type: 'button', class: 'danger', id: `${id}-remove` }, t('conn.remove'));
  del.addEventListener('click', remove);
  const el = h('div', { class: 'connection', role: 'group', 'aria-labelledby': `${id}-title`, 'data-connection': c.name ?? '' },
    h('p', { class: 'connection-title', id: `${id}-title` }, fresh ? t('conn.new') : t('conn.named', { name: c.name })),
    h('div', { class: 'connection-fields' },
      h('div', { class: 'field' }, h('label', { for: `${id}-name` }, t('conn.name')), name,
        h('p', { class: 'muted small', id: `${id}-name-help` }, t('conn.nameHelp'))),
      h('div', { class: 'field' }, h('label', { for: `${id}-url` }, t('conn.url')), url,
        h('p', { class: 'muted small', id: `${id}-url-help` }, t('conn.urlHelp')))),
    h('div', { class: 'field' }, h('label', { for: `${id}-key` }, t('conn.key')), h('div', { class: 'row' }, key, clear),
      h('p', { class: 'muted small' }, keyState, c.key_set ? ` ${t('conn.keyOnlyToUrl')}` : '')),
    h('div', { class: 'row' }, test, del), out);
  return {
    el,
    name: () => name.value.trim(),
    focus: () => name.focus(),
    value: () => {
      const v = { name: name.value.trim(), base_url: url.value.trim() };
      if (clearing) v.clear_key = true;
      else if (key.value.trim()) v.key = key.value.trim();
      return v;
    },
  };
}

// modelList shows what a connection test found: the models, each as an
// agent names it (NAME:model).
function modelList(name, r) {
  const models = r.models ?? [];
  const count = r.truncated ? tn('conn.modelsFirst', models.length) : tn('conn.models', models.length);
  const said = { typed: t('conn.okTyped', { url: r.url, models: count }), saved: t('conn.okSaved', { url: r.url, models: count }),
    none: t('conn.okNone', { url: r.url, models: count }) }[r.key_used] ?? t('conn.ok', { url: r.url, models: count });
  return h('div', { class: 'ok connection-ok' },
    h('p', null, said, models.length ? ` ${t('conn.useAs')}` : ''),
    models.length ? h('ul', { class: 'model-list' }, models.map((m) => h('li', null, h('code', null, `${name}:${m}`)))) : null);
}

// embeddingText says which embedding model memory uses, and that the
// built-in one is weaker than a real model.
function embeddingText(model) {
  if (!model) return t('settings.embeddingNone');
  if (model === 'local:ngram-512') return t('settings.embeddingLocal', { model });
  return t('settings.embeddingModel', { model });
}
