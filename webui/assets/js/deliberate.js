// Deliberate Tool Mode on the Settings page (admins): the organisation's
// toggle, re-scan depth and always-on choice, saved on their own (PUT
// /api/deliberate), and
// its custom triggers, each added (POST /api/deliberate/triggers) or
// removed (DELETE …?target=&phrase=) at once. See docs/intent.md.
import { h, errorBox, field, replace } from './dom.js';
import { t, tx } from './i18n.js';

// section reads the settings and returns the section that shows them; a
// failed read is said inside it, so the rest of the page still works.
export async function section(api) {
  const el = h('section', { class: 'dtm', id: 'dtm', 'aria-labelledby': 'dtm-h' },
    h('h2', { id: 'dtm-h' }, t('ins.dtm')),
    h('p', { class: 'muted small' }, tx('dtm.lede', { key: h('code', null, 'deliberate_tool_mode') })));
  let d;
  try {
    d = await api.get('/api/deliberate');
  } catch (err) {
    el.append(errorBox(err, t('dtm.readFailed')));
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
      status.append(h('p', { class: 'ok' }, t('dtm.saved', {
        state: saved.enabled ? t('settings.on') : t('settings.off'),
        depth: depthText(saved.history_turns, saved.default_history_turns),
        gate: saved.gate_always_on ? t('dtm.gated') : t('dtm.kept'),
        shift: typeof saved.classifier_shift === 'number' ? shiftLabel(saved.classifier_shift) : t('dtm.shiftDefault'),
      })));
    } catch (err) {
      button.disabled = false;
      status.append(errorBox(err, t('common.notSaved')));
    }
    status.focus();
  };
  showMode(d);
  el.append(status, modeHolder, triggers.el);
  return el;
}

// depthText says how many recent messages are re-scanned.
function depthText(n, def) {
  if (n < 0) return t('dtm.defaultDepth', { n: def });
  return n === 1 ? t('dtm.depthOne') : t('dtm.depth', { n });
}

// shiftSteps are the classifier shifts the form offers besides the
// deployment's (docs/intent.md); a stored shift between them is offered too.
const shiftSteps = [-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3];

// shiftLabel names a shift with what it does.
function shiftLabel(v) {
  if (v === 0) return t('dtm.shiftZero');
  const shown = (v > 0 ? '+' : '') + v.toFixed(2);
  return v < 0 ? t('dtm.shiftMore', { v: shown }) : t('dtm.shiftLess', { v: shown });
}

// shiftSelect offers the deployment's shift and shiftSteps, the stored
// one selected.
function shiftSelect(current) {
  const has = typeof current === 'number';
  const steps = has && !shiftSteps.includes(current) ? [...shiftSteps, current].sort((a, b) => a - b) : shiftSteps;
  return h('select', { id: 'dtm-shift', class: 'narrow' },
    h('option', { value: '', selected: !has }, t('dtm.shiftDefault')),
    steps.map((v) => h('option', { value: String(v), selected: has && v === current }, shiftLabel(v))));
}

// modeForm is the toggle, the re-scan depth, the always-on choice and the
// classifier shift; submitting it calls save({enabled, history_turns,
// gate_always_on, classifier_shift | classifier_shift_default}, button).
function modeForm(d, save) {
  const on = h('input', { type: 'checkbox', id: 'dtm-enabled', checked: Boolean(d.enabled), 'aria-describedby': 'dtm-enabled-help' });
  const depth = h('select', { id: 'dtm-history', class: 'narrow' },
    h('option', { value: '-1', selected: d.history_turns < 0 }, t('dtm.default', { n: d.default_history_turns })),
    Array.from({ length: 11 }, (_, n) => h('option', { value: String(n), selected: n === d.history_turns },
      n === 0 ? t('dtm.zero') : String(n))));
  const gate = h('input', { type: 'checkbox', id: 'dtm-gate-always-on', checked: Boolean(d.gate_always_on),
    'aria-describedby': 'dtm-gate-always-on-help' });
  const shift = shiftSelect(d.classifier_shift);
  const submit = h('button', { type: 'submit', class: 'primary', id: 'dtm-save' }, t('dtm.save'));
  const form = h('form', { class: 'settings-form', id: 'dtm-form', 'aria-label': t('ins.dtm') },
    h('fieldset', null, h('legend', null, t('dtm.mode')),
      h('div', { class: 'check' }, on, h('label', { for: 'dtm-enabled' }, t('dtm.on')),
        h('p', { class: 'muted small', id: 'dtm-enabled-help' }, t('dtm.onHelp'))),
      field('dtm-history', t('dtm.history'), depth, t('dtm.historyHelp')),
      h('div', { class: 'check' }, gate, h('label', { for: 'dtm-gate-always-on' }, t('dtm.gate')),
        h('p', { class: 'muted small', id: 'dtm-gate-always-on-help' }, t('dtm.gateHelp'))),
      field('dtm-shift', t('dtm.shift'), shift, t('dtm.shiftHelp')),
      h('div', { class: 'row' }, submit)));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const update = { enabled: on.checked, history_turns: Number(depth.value), gate_always_on: gate.checked };
    if (shift.value === '') update.classifier_shift_default = true;
    else update.classifier_shift = Number(shift.value);
    save(update, submit);
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
  const title = h('h3', { id: 'triggers-h', tabindex: '-1' }, t('dtm.triggers'));
  const render = () => replace(groups, triggerGroups(targets, list, d.max_triggers_per_target, remove));
  const remove = async (tr) => {
    replace(status);
    const q = new URLSearchParams({ target: tr.target, phrase: tr.phrase });
    try {
      await api.del(`/api/deliberate/triggers?${q}`);
      status.append(h('p', { class: 'ok' }, t('dtm.removed', { phrase: tr.phrase, target: tr.target })));
    } catch (err) {
      status.append(errorBox(err, t('dtm.notRemoved', { phrase: tr.phrase })));
      if (err.status !== 404) return;
    }
    list = list.filter((x) => x !== tr);
    render();
    title.focus();
  };
  const add = async (tr) => {
    replace(status);
    try {
      const saved = await api.post('/api/deliberate/triggers', tr);
      list.push({ target: saved.target, phrase: saved.phrase });
      render();
      status.append(h('p', { class: 'ok' }, t('dtm.added', { phrase: saved.phrase, target: saved.target })));
      return true;
    } catch (err) {
      status.append(errorBox(err, t('common.notAdded')));
      return false;
    }
  };
  render();
  return {
    el: h('div', { class: 'triggers-panel' }, title,
      h('p', { class: 'muted small' }, tx('dtm.triggersHelp', { max: d.max_triggers_per_target,
        star: h('code', null, '*'), caret: h('code', null, '^') })),
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
  if (!list.length) return h('p', { class: 'muted' }, t('dtm.noTriggers'));
  const order = [...targets, ...list.map((tr) => tr.target).filter((x) => !targets.includes(x))];
  return h('div', { class: 'trigger-groups' }, [...new Set(order)].map((target) => {
    const mine = list.filter((tr) => tr.target === target);
    if (!mine.length) return null;
    return h('section', { class: 'trigger-group', 'data-target': target, 'aria-labelledby': `tg-${target}` },
      h('h4', { id: `tg-${target}` }, h('code', null, target),
        h('span', { class: 'muted small' }, ' ', t('dtm.count', { n: mine.length, max }))),
      h('ul', { class: 'trigger-phrases' }, mine.map((tr) => h('li', { 'data-phrase': tr.phrase },
        h('code', { class: 'phrase' }, tr.phrase),
        tr.phrase === '^' ? h('span', { class: 'muted small' }, t('dtm.everyTurn')) : null,
        h('button', { type: 'button', class: 'remove', onclick: () => remove(tr),
          'aria-label': t('dtm.removeNamed', { phrase: tr.phrase, target }) }, t('dtm.remove'))))));
  }));
}

// addForm adds a trigger: add({target, phrase}) resolves true when it was
// added, which empties the phrase for the next one.
function addForm(targets, add) {
  const target = h('select', { id: 'trigger-target', name: 'target' }, targets.map((x) => h('option', { value: x }, x)));
  const phrase = h('input', { id: 'trigger-phrase', name: 'phrase', required: true, maxlength: 200, autocomplete: 'off',
    spellcheck: 'false' });
  const submit = h('button', { type: 'submit', id: 'trigger-add-button' }, t('dtm.addButton'));
  const form = h('form', { class: 'settings-form', id: 'trigger-add', 'aria-label': t('dtm.addLabel') },
    h('fieldset', null, h('legend', null, t('dtm.addLegend')),
      h('div', { class: 'trigger-pick' }, field('trigger-target', t('tools.colFamily'), target),
        field('trigger-phrase', t('dtm.phrase'), phrase)),
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
