// Settings (admins): the organisation's feature switches, network mode,
// web search engines and write-only keys. Save sends all of it with the
// version it was read at; a save on top of someone else's is refused (409
// conflict) and the page shows what is stored now. Deliberate Tool Mode
// follows, with its own form (deliberate.js).
import { h, heading, errorBox, field, when, replace } from './dom.js';
import * as deliberate from './deliberate.js';


const MODES = {
  public: ['Public', 'Web tools and MCP servers reach public addresses only, on ports 80 and 443.'],
  'self-hosted': ['Self-hosted', 'Also private and loopback addresses and any port: engines and servers on your own network.'],
};

export async function render({ api, me, main }) {
  main.append(heading('Settings'));
  if (me.role !== 'admin') {
    main.append(h('p', null, 'Only admins of your organisation change its settings.'));
    return;
  }
  main.append(h('p', { class: 'lede' }, 'Your organisation\'s feature switches, network mode, web search engines, keys ',
    'and Deliberate Tool Mode. ',
    'An agent\'s own switches override the ones here.'));
  const status = h('div', { class: 'form-status', id: 'settings-status', 'aria-live': 'polite', tabindex: '-1' });
  const holder = h('div');
  const show = (s) => replace(holder, settingsForm(s, save));
  // save sends an update; its outcome is said in status, and the form is
  // rebuilt from what the server stores now (which also empties the key
  // fields) unless the server refused the update itself.
  const save = async (update, button) => {
    replace(status);
    button.disabled = true;
    try {
      const saved = await api.put('/api/settings', update);
      show(saved);
      status.append(h('p', { class: 'ok' }, 'Settings saved.'));
    } catch (err) {
      button.disabled = false;
      if (err.status !== 409) {
        status.append(errorBox(err, 'Not saved'));
        status.focus();
        return;
      }
      status.append(h('p', { class: 'alert', role: 'alert' },
        'Not saved: someone else saved the settings while you were editing. ',
        'This page now shows what they saved; make your changes again.'));
      try {
        show(await api.get('/api/settings'));
      } catch (again) {
        status.append(errorBox(again, 'The settings could not be reloaded'));
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
// save(update, button).
function settingsForm(s, save) {
  const info = Object.fromEntries((s.switch_info ?? []).map((i) => [i.name, i]));
  const switches = (s.switch_names ?? []).map((n) => switchRow(n, s.switches?.[n], info[n]));
  const keys = (s.keys ?? []).map(keyRow);
  const web = webFields(s.web ?? {});
  const modes = s.network_modes ?? [];
  const submit = h('button', { type: 'submit', class: 'primary', id: 'settings-save' }, 'Save settings');
  const form = h('form', { class: 'settings-form', id: 'settings-form', 'aria-label': 'Settings' },
    h('fieldset', { class: 'switches' }, h('legend', null, 'Feature switches'),
      h('p', { class: 'muted small' }, 'A switch that is not set leaves each agent to its own switches; ',
        'one set here applies to every agent that does not set it. Unset returns it to not set.'),
      switches.length ? h('div', { class: 'switch-list' }, switches.map((r) => r.el)) : h('p', null, 'No switches.')),
    h('fieldset', { class: 'modes' }, h('legend', null, 'Network mode'),
      modes.map((m) => h('div', { class: 'choice' },
        h('input', { type: 'radio', name: 'network_mode', id: `mode-${m}`, value: m, required: true,
          checked: m === s.network_mode, 'aria-describedby': `mode-${m}-help` }),
        h('label', { for: `mode-${m}` }, MODES[m]?.[0] ?? m),
        h('p', { class: 'muted small', id: `mode-${m}-help` }, MODES[m]?.[1] ?? ''))),
      modes.includes('self-hosted') ? null
        : h('p', { class: 'muted small' }, 'This deployment allows public mode only (its config file sets ',
          h('code', null, 'network.mode'), ').')),
    web.el,
    h('fieldset', { class: 'keys' }, h('legend', null, 'Keys'),
      h('p', { class: 'muted small' }, 'Write-only: a key saved here is never shown again, here or by the API. ',
        'Leave a field empty to keep the key as it is. A key saved here replaces the environment\'s for your organisation.'),
      keys.map((k) => k.el)),
    h('div', { class: 'row' }, submit,
      h('span', { class: 'muted small' }, s.version
        ? `Version ${s.version}, saved ${when(s.updated_at)}.`
        : 'Never saved: the server\'s configuration applies.')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const update = {
      version: s.version,
      switches: Object.fromEntries(switches.filter((r) => r.value() !== undefined).map((r) => [r.name, r.value()])),
      network_mode: form.querySelector('input[name="network_mode"]:checked')?.value ?? s.network_mode,
      web: web.value(),
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
    inert ? `No tool yet: this switch changes nothing. It will gate the ${info.family || name} family's tools ` +
      `once there are some; until then capability:${name} is never true in a prompt.` : (info?.effect ?? ''));
  const unset = h('button', { type: 'button', class: 'link small', 'aria-label': `Unset ${name}` }, 'Unset');
  const show = () => {
    box.indeterminate = !set;
    unset.hidden = !set;
    state.textContent = !set ? 'not set' : box.checked ? 'on' : 'off';
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
      h('label', { for: id }, humanize(name), inert ? h('span', { class: 'badge off no-tool-badge' }, 'No tool yet') : null,
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
  const disabled = check('web-disabled', 'Turn web search off for every agent', w.disabled);
  const searxng = url('web-searxng', w.searxng_url);
  const iask = url('web-iask', w.iask_url);
  const ddg = check('web-ddg-disabled', 'Leave DuckDuckGo out of the chain', w.duckduckgo_disabled);
  // exclude_providers names model providers (not engines) whose turns
  // never get a web tool, e.g. a local model that handles them badly.
  const exclude = h('input', { id: 'web-exclude', type: 'text', maxlength: 300, autocomplete: 'off',
    spellcheck: 'false', placeholder: 'ollama, novelai', value: (w.exclude_providers ?? []).join(', ') });
  return {
    el: h('fieldset', { class: 'web' }, h('legend', null, 'Web search'),
      h('p', { class: 'muted small' }, 'web_search asks Brave, SearXNG, DuckDuckGo and IAsk in turn and answers with the first that finds something. Brave takes part when its key is set below; SearXNG and IAsk when they have a URL.'),
      disabled.el,
      field('web-searxng', 'SearXNG URL', searxng, 'The base URL of a SearXNG instance; empty leaves SearXNG out. One on your own network needs self-hosted mode.'),
      field('web-iask', 'IAsk URL', iask, 'The IAsk endpoint; empty leaves IAsk out.'),
      ddg.el,
      field('web-exclude', 'Model providers without web tools', exclude,
        'Comma-separated provider names (as in an agent\'s provider:model); their turns never get web_search, fetch_url or research_web.')),
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
  if (!k.set) return 'not set';
  return k.source ? `set (${k.source})` : 'set';
}

// keyRow is one write-only key: a password field for a new value, its
// state, and Clear for a key saved here. value() is the new value ("" for
// none); clearing() whether it is to be removed.
function keyRow(k) {
  const id = `key-${k.name}`;
  const input = h('input', { type: 'password', id, autocomplete: 'new-password', spellcheck: 'false', autocapitalize: 'off',
    maxlength: 500, placeholder: k.set ? 'Type a new key to replace it' : 'Type the key to set it', 'aria-describedby': `${id}-state` });
  const state = h('span', { class: 'key-state', id: `${id}-state` }, keyState(k));
  let clearing = false;
  let clear = null;
  if (k.source === 'settings') {
    clear = h('button', { type: 'button', class: 'secondary', 'aria-label': `Clear ${k.label}` }, 'Clear');
    clear.addEventListener('click', () => {
      clearing = !clearing;
      input.value = '';
      input.disabled = clearing;
      clear.textContent = clearing ? 'Keep' : 'Clear';
      clear.setAttribute('aria-label', `${clearing ? 'Keep' : 'Clear'} ${k.label}`);
      state.textContent = clearing ? `${keyState(k)}: cleared when you save` : keyState(k);
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
