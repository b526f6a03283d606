// Preferences (every signed-in user): your own name, department and
// timezone (PATCH /api/me) and your Deliberate Tool Mode override
// (PUT /api/me/deliberate). Save sends only what changed. Your API
// tokens are a page of their own under it, #/preferences/tokens
// (tokens.js). Below the form, your budget this month (budget.js).
//
// The profile is read and written without X-Timezone: /api/me answers the
// browser's zone when a request sends one, and the stored zone otherwise,
// which is the one this page edits.
import { h, heading, errorBox, field, replace } from './dom.js';
import { t, tx } from './i18n.js';
import * as tokens from './tokens.js';
import * as budget from './budget.js';

const FIELDS = ['display_name', 'department', 'timezone'];

const MODES = () => [
  ['off', t('prefs.modeOff'), t('prefs.modeOffHelp')],
  ['follow', t('prefs.modeFollow'), t('prefs.modeFollowHelp')],
  ['on', t('prefs.modeOn'), t('prefs.modeOnHelp')],
];

export async function render(ctx) {
  if (ctx.args[0] === 'tokens') {
    await tokens.render(ctx);
    return;
  }
  const { api, main, refreshMe } = ctx;
  main.append(heading(t('prefs.title')), h('p', { class: 'lede' }, t('prefs.lede')),
    h('p', null, tx('prefs.tokensLink', { link: h('a', { href: '#/preferences/tokens', id: 'tokens-link' }, t('prefs.tokens')) })));
  const mine = budget.mine(api);
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
      status.append(h('p', { class: 'muted' }, t('prefs.nothingChanged')));
      status.focus();
      return;
    }
    button.disabled = true;
    let failure = t('common.notSaved');
    try {
      if (changes) {
        base.profile = await api.patch('/api/me', changes, { zone: false });
        failure = t('prefs.profileOnly');
      }
      if (mode) base.mode = (await api.put('/api/me/deliberate', { mode })).mode;
    } catch (err) {
      button.disabled = false;
      status.append(errorBox(err, failure));
      status.focus();
      return;
    }
    show();
    status.append(h('p', { class: 'ok' }, t('prefs.saved')));
    status.focus();
    // The header shows the new name.
    if (changes?.display_name !== undefined) await refreshMe().catch(() => null);
  };
  main.append(status, holder, h('datalist', { id: 'pref-zones' },
    (Intl.supportedValuesOf?.('timeZone') ?? []).map((z) => h('option', { value: z }))), await mine);
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
    timezone: input('timezone', { list: 'pref-zones', maxlength: 64, spellcheck: 'false', placeholder: t('prefs.zoneUnset') }),
  };
  const useBrowser = browserZone
    ? h('button', { type: 'button', id: 'pref-use-browser-zone', onclick: () => { f.timezone.value = browserZone; f.timezone.focus(); } },
      t('prefs.useBrowserZone', { zone: browserZone }))
    : null;
  const submit = h('button', { type: 'submit', class: 'primary', id: 'prefs-save' }, t('prefs.save'));
  const form = h('form', { class: 'settings-form', id: 'prefs-form', 'aria-label': t('prefs.title') },
    h('fieldset', null, h('legend', null, t('prefs.profile')),
      field('pref-display_name', t('prefs.name'), f.display_name),
      field('pref-department', t('prefs.department'), f.department),
      field('pref-timezone', t('prefs.timezone'), f.timezone, browserZone
        ? t('prefs.zoneHelp', { zone: browserZone })
        : t('prefs.zoneHelpNone')),
      useBrowser ? h('div', { class: 'row' }, useBrowser) : null),
    h('fieldset', { class: 'modes' }, h('legend', null, t('ins.dtm')),
      h('p', { class: 'muted small' }, t('prefs.dtmHelp')),
      MODES().map(([value, label, help]) => h('div', { class: 'choice' },
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
