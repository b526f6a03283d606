// Preferences (every signed-in user): your own name, department and
// timezone (PATCH /api/me) and your Deliberate Tool Mode override
// (PUT /api/me/deliberate). Save sends only what changed. Your API
// tokens are a page of their own under it, #/preferences/tokens
// (tokens.js).
//
// The profile is read and written without X-Timezone: /api/me answers the
// browser's zone when a request sends one, and the stored zone otherwise,
// which is the one this page edits.
import { h, heading, errorBox, field, replace } from './dom.js';
import * as tokens from './tokens.js';

const FIELDS = ['display_name', 'department', 'timezone'];

const MODES = [
  ['off', 'Off', 'Your turns offer every tool the agent has, whatever the organisation or the agent chose.'],
  ['follow', 'Follow the organisation', 'The agent\'s setting when it has one, else the organisation\'s. The default.'],
  ['on', 'On', 'Your turns offer only the tool families your message plainly asks for, whatever the organisation or the agent chose.'],
];

export async function render(ctx) {
  if (ctx.args[0] === 'tokens') {
    await tokens.render(ctx);
    return;
  }
  const { api, main, refreshMe } = ctx;
  main.append(heading('Preferences'),
    h('p', { class: 'lede' }, 'Your profile, which agents see at the start of each of your turns, and how your turns pick tools.'),
    h('p', null, 'Programs that call the API for you use a token: ', h('a', { href: '#/preferences/tokens', id: 'tokens-link' }, 'API tokens'), '.'));
  const [profile, dtm] = await Promise.all([api.get('/api/me', { zone: false }), api.get('/api/me/deliberate')]);
  // base is what is stored: the form sends what differs from it.
  const base = { profile, mode: dtm?.mode ?? 'follow' };
  const status = h('div', { class: 'form-status', id: 'prefs-status', 'aria-live': 'polite', tabindex: '-1' });
  const holder = h('div');
  const show = () => replace(holder, prefsForm(base, api.timezone, save));
  // save sends the profile's changes, then the mode's; each one saved
  // becomes the new base, so after a failure the next save sends only
  // what is still unsaved. The form is rebuilt from the answers once all
  // are saved, and keeps the edits otherwise.
  const save = async ({ changes, mode }, button) => {
    replace(status);
    if (!changes && !mode) {
      status.append(h('p', { class: 'muted' }, 'Nothing changed.'));
      status.focus();
      return;
    }
    button.disabled = true;
    let failure = 'Not saved';
    try {
      if (changes) {
        base.profile = await api.patch('/api/me', changes, { zone: false });
        failure = 'Your profile was saved, but not your Deliberate Tool Mode';
      }
      if (mode) base.mode = (await api.put('/api/me/deliberate', { mode })).mode;
    } catch (err) {
      button.disabled = false;
      status.append(errorBox(err, failure));
      status.focus();
      return;
    }
    show();
    status.append(h('p', { class: 'ok' }, 'Preferences saved.'));
    status.focus();
    // The header shows the new name.
    if (changes?.display_name !== undefined) await refreshMe().catch(() => null);
  };
  main.append(status, holder, h('datalist', { id: 'pref-zones' },
    (Intl.supportedValuesOf?.('timeZone') ?? []).map((z) => h('option', { value: z }))));
  show();
}

// prefsForm lays out base; submitting it calls save({changes, mode},
// button) with the profile fields that differ from base (or null) and the
// mode when it differs (or null).
function prefsForm(base, browserZone, save) {
  const p = base.profile ?? {};
  const input = (name, attrs) => h('input', { id: `pref-${name}`, name, value: p[name] ?? '', autocomplete: 'off', ...attrs });
  const f = {
    display_name: input('display_name', { required: true, maxlength: 100, autocomplete: 'name' }),
    department: input('department', { maxlength: 100 }),
    timezone: input('timezone', { list: 'pref-zones', maxlength: 64, spellcheck: 'false', placeholder: 'Not set: UTC' }),
  };
  const useBrowser = browserZone
    ? h('button', { type: 'button', id: 'pref-use-browser-zone', onclick: () => { f.timezone.value = browserZone; f.timezone.focus(); } },
      `Use this browser's zone (${browserZone})`)
    : null;
  const submit = h('button', { type: 'submit', class: 'primary', id: 'prefs-save' }, 'Save preferences');
  const form = h('form', { class: 'settings-form', id: 'prefs-form', 'aria-label': 'Preferences' },
    h('fieldset', null, h('legend', null, 'Profile'),
      field('pref-display_name', 'Name', f.display_name),
      field('pref-department', 'Department (optional)', f.department),
      field('pref-timezone', 'Timezone', f.timezone, browserZone
        ? `The zone stored for you (an IANA zone such as Europe/Paris), used when a request names none, as with API tokens. ` +
          `This browser sends its own zone, ${browserZone}, with each request, so what you do here runs in ${browserZone}.`
        : 'The zone stored for you (an IANA zone such as Europe/Paris). This browser sends none, so it applies here too.'),
      useBrowser ? h('div', { class: 'row' }, useBrowser) : null),
    h('fieldset', { class: 'modes' }, h('legend', null, 'Deliberate Tool Mode'),
      h('p', { class: 'muted small' }, 'With it on, a turn offers the model only the tool families its message plainly asks for, ',
        'and an ordinary chat message none.'),
      MODES.map(([value, label, help]) => h('div', { class: 'choice' },
        h('input', { type: 'radio', name: 'dtm_mode', id: `pref-mode-${value}`, value, checked: value === base.mode,
          'aria-describedby': `pref-mode-${value}-help` }),
        h('label', { for: `pref-mode-${value}` }, label),
        h('p', { class: 'muted small', id: `pref-mode-${value}-help` }, help)))),
    h('div', { class: 'row' }, submit));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const changes = {};
    for (const k of FIELDS) {
      const v = f[k].value.trim();
      if (v !== (base.profile?.[k] ?? '')) changes[k] = v;
    }
    const mode = form.querySelector('input[name="dtm_mode"]:checked')?.value;
    save({ changes: Object.keys(changes).length ? changes : null, mode: mode && mode !== base.mode ? mode : null }, submit);
  });
  return form;
}
