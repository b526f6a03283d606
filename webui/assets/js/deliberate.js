// Deliberate Tool Mode on the Settings page (admins): the organisation's
// toggle, re-scan depth and always-on choice, saved on their own (PUT
// /api/deliberate), and
// its custom triggers, each added (POST /api/deliberate/triggers) or
// removed (DELETE …?target=&phrase=) at once. See docs/intent.md.
import { h, errorBox, field, replace } from './dom.js';

// section reads the settings and returns the section that shows them; a
// failed read is said inside it, so the rest of the page still works.
export async function section(api) {
  const el = h('section', { class: 'dtm', id: 'dtm', 'aria-labelledby': 'dtm-h' },
    h('h2', { id: 'dtm-h' }, 'Deliberate Tool Mode'),
    h('p', { class: 'muted small' }, 'With it on, a turn offers the model only the tool families its message plainly asks ',
      'for besides the always-on tools, and an ordinary chat message only those: smaller prompts, and better choices ',
      'from small models. ',
      'A user\'s own On or Off (on their Preferences) wins over this, and an agent\'s ',
      h('code', null, 'deliberate_tool_mode'), ' over it for the agent\'s turns. Saved apart from the settings above.'));
  let d;
  try {
    d = await api.get('/api/deliberate');
  } catch (err) {
    el.append(errorBox(err, 'Deliberate Tool Mode could not be read'));
    return el;
  }
  const status = h('div', { class: 'form-status', id: 'dtm-status', 'aria-live': 'polite', tabindex: '-1' });
  const modeHolder = h('div');
  const triggers = triggerPanel(api, d);
  const showMode = (now) => replace(modeHolder, modeForm(now, saveMode));
  // saveMode sends the toggle and depth; the form is rebuilt from the
  // answer, which is what is stored now.
  const saveMode = async (update, button) => {
    replace(status);
    button.disabled = true;
    try {
      const saved = await api.put('/api/deliberate', update);
      showMode(saved);
      triggers.show(saved.triggers ?? []);
      status.append(h('p', { class: 'ok' }, `Deliberate Tool Mode saved: ${saved.enabled ? 'on' : 'off'}, `,
        depthText(saved.history_turns, saved.default_history_turns), ', ',
        saved.gate_always_on ? 'always-on tools gated too' : 'always-on tools kept', '.'));
    } catch (err) {
      button.disabled = false;
      status.append(errorBox(err, 'Not saved'));
    }
    status.focus();
  };
  showMode(d);
  el.append(status, modeHolder, triggers.el);
  return el;
}

// depthText says how many recent messages are re-scanned.
function depthText(n, def) {
  if (n < 0) return `the default depth (${def} recent messages re-scanned)`;
  return n === 1 ? '1 recent message re-scanned' : `${n} recent messages re-scanned`;
}

// modeForm is the toggle, the re-scan depth and the always-on choice;
// submitting it calls save({enabled, history_turns, gate_always_on},
// button).
function modeForm(d, save) {
  const on = h('input', { type: 'checkbox', id: 'dtm-enabled', checked: Boolean(d.enabled), 'aria-describedby': 'dtm-enabled-help' });
  const depth = h('select', { id: 'dtm-history', class: 'narrow' },
    h('option', { value: '-1', selected: d.history_turns < 0 }, `Default (${d.default_history_turns})`),
    Array.from({ length: 11 }, (_, n) => h('option', { value: String(n), selected: n === d.history_turns },
      n === 0 ? '0 (the new message only)' : String(n))));
  const gate = h('input', { type: 'checkbox', id: 'dtm-gate-always-on', checked: Boolean(d.gate_always_on),
    'aria-describedby': 'dtm-gate-always-on-help' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'dtm-save' }, 'Save Deliberate Tool Mode');
  const form = h('form', { class: 'settings-form', id: 'dtm-form', 'aria-label': 'Deliberate Tool Mode' },
    h('fieldset', null, h('legend', null, 'Mode'),
      h('div', { class: 'check' }, on, h('label', { for: 'dtm-enabled' }, 'On for the organisation'),
        h('p', { class: 'muted small', id: 'dtm-enabled-help' }, 'Off: every turn offers all the tools its agent has.')),
      field('dtm-history', 'Recent messages re-scanned', depth,
        'Your users\' last messages read again on each turn, so a family stays open while its request is recent: 0 to 10.'),
      h('div', { class: 'check' }, gate, h('label', { for: 'dtm-gate-always-on' }, 'Gate the always-on tools too'),
        h('p', { class: 'muted small', id: 'dtm-gate-always-on-help' },
          'Off: the clarifying question, suggestions, calculator, read_tool_result and read_transcript are offered on ',
          'every turn, because they widen no permission. On, for small local models that choose better from fewer tools: ',
          'the calculator and read_tool_result are offered only when a message asks for a calculation, a search or files, ',
          'and the clarifying question, suggestions and read_transcript are not offered at all.')),
      h('div', { class: 'row' }, submit)));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    save({ enabled: on.checked, history_turns: Number(depth.value), gate_always_on: gate.checked }, submit);
  });
  return form;
}

// triggerPanel lists the custom triggers by target, each with Remove,
// and the form that adds one. show(triggers) lists them anew.
function triggerPanel(api, d) {
  const targets = d.targets ?? [];
  let list = [...(d.triggers ?? [])];
  const status = h('div', { class: 'form-status', id: 'trigger-status', 'aria-live': 'polite' });
  const groups = h('div', { id: 'trigger-list' });
  const title = h('h3', { id: 'triggers-h', tabindex: '-1' }, 'Custom triggers');
  const render = () => replace(groups, triggerGroups(targets, list, d.max_triggers_per_target, remove));
  const remove = async (t) => {
    replace(status);
    const q = new URLSearchParams({ target: t.target, phrase: t.phrase });
    try {
      await api.del(`/api/deliberate/triggers?${q}`);
      status.append(h('p', { class: 'ok' }, `Removed “${t.phrase}” from ${t.target}.`));
    } catch (err) {
      status.append(errorBox(err, `“${t.phrase}” not removed`));
      if (err.status !== 404) return;
    }
    list = list.filter((x) => x !== t);
    render();
    title.focus();
  };
  const add = async (t) => {
    replace(status);
    try {
      const saved = await api.post('/api/deliberate/triggers', t);
      list.push({ target: saved.target, phrase: saved.phrase });
      render();
      status.append(h('p', { class: 'ok' }, `Added “${saved.phrase}” to ${saved.target}.`));
      return true;
    } catch (err) {
      status.append(errorBox(err, 'Not added'));
      return false;
    }
  };
  render();
  return {
    el: h('div', { class: 'triggers-panel' }, title,
      h('p', { class: 'muted small' }, 'Your organisation\'s own words that open a family, on top of the keyword packs: ',
        `at most ${d.max_triggers_per_target} per family. A phrase is literal and stored the way messages are read `,
        '(lower case, spaces collapsed); one ending in ', h('code', null, '*'), ' matches any word it starts, and ',
        h('code', null, '^'), ' opens the family on every turn.'),
      groups, addForm(targets, add), status),
    show: (triggers) => {
      list = [...triggers];
      render();
    },
  };
}

// triggerGroups lists the triggers under their targets, in the targets'
// order; a target without triggers is left out.
function triggerGroups(targets, list, max, remove) {
  if (!list.length) return h('p', { class: 'muted' }, 'No custom triggers: the keyword packs alone open families.');
  const order = [...targets, ...list.map((t) => t.target).filter((t) => !targets.includes(t))];
  return h('div', { class: 'trigger-groups' }, [...new Set(order)].map((target) => {
    const mine = list.filter((t) => t.target === target);
    if (!mine.length) return null;
    return h('section', { class: 'trigger-group', 'data-target': target, 'aria-labelledby': `tg-${target}` },
      h('h4', { id: `tg-${target}` }, h('code', null, target),
        h('span', { class: 'muted small' }, ` ${mine.length} of ${max}`)),
      h('ul', { class: 'trigger-phrases' }, mine.map((t) => h('li', { 'data-phrase': t.phrase },
        h('code', { class: 'phrase' }, t.phrase),
        t.phrase === '^' ? h('span', { class: 'muted small' }, 'every turn') : null,
        h('button', { type: 'button', class: 'remove', onclick: () => remove(t),
          'aria-label': `Remove ${t.phrase} from ${target}` }, 'Remove')))));
  }));
}

// addForm adds a trigger: add({target, phrase}) resolves true when it was
// added, which empties the phrase for the next one.
function addForm(targets, add) {
  const target = h('select', { id: 'trigger-target', name: 'target' }, targets.map((t) => h('option', { value: t }, t)));
  const phrase = h('input', { id: 'trigger-phrase', name: 'phrase', required: true, maxlength: 200, autocomplete: 'off',
    spellcheck: 'false' });
  const submit = h('button', { type: 'submit', id: 'trigger-add-button' }, 'Add trigger');
  const form = h('form', { class: 'settings-form', id: 'trigger-add', 'aria-label': 'Add a custom trigger' },
    h('fieldset', null, h('legend', null, 'Add a trigger'),
      h('div', { class: 'trigger-pick' }, field('trigger-target', 'Family', target),
        field('trigger-phrase', 'Phrase', phrase)),
      h('div', { class: 'row' }, submit)));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    if (await add({ target: target.value, phrase: phrase.value })) phrase.value = '';
    submit.disabled = false;
    phrase.focus();
  });
  return form;
}
