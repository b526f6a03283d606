// API tokens (every signed-in user, under Preferences): make a personal
// token for a program (POST /api/tokens; its secret is shown this once,
// with a copy button), list your tokens (GET /api/tokens: labels and
// dates, never secrets) and revoke one (DELETE /api/tokens/{id}).
//
// The secret lives only in the panel that shows it: it is never stored
// (no localStorage, no URL), and leaving the page or pressing Done drops
// it.
import { h, heading, errorBox, field, when, confirm, copyInput, replace } from './dom.js';
import { t, tn, tx } from './i18n.js';

const enc = encodeURIComponent;

// EXPIRIES are the lifetimes offered, in days (0: never).
const EXPIRIES = () => [[30, t('tokens.days30')], [90, t('tokens.days90')], [365, t('tokens.oneYear')], [0, t('tokens.never')]];

export async function render({ api, main }) {
  main.append(heading(t('tokens.title')),
    h('p', { class: 'lede' }, tx('tokens.lede', { header: h('code', null, 'Authorization: Bearer <token>') })),
    h('p', null, h('a', { href: '#/preferences' }, t('tokens.back'))));
  const status = h('div', { class: 'form-status', id: 'tokens-status', 'aria-live': 'polite', tabindex: '-1' });
  const shown = h('div', { id: 'new-token-holder' });
  const list = h('div', { id: 'token-list' });
  const refresh = async () => {
    const tokens = (await api.get('/api/tokens'))?.tokens ?? [];
    replace(list, tokenTable(tokens, revoke));
  };
  // revoke asks first, then deletes the token and lists again.
  const revoke = async (tok, button) => {
    const name = tok.label || tok.id;
    if (!(await confirm(t('tokens.revokeQuestion', { name }), t('tokens.revokeToken')))) {
      button.focus();
      return;
    }
    replace(status);
    try {
      await api.del(`/api/tokens/${enc(tok.id)}`);
      status.append(h('p', { class: 'ok' }, t('tokens.revoked', { name })));
    } catch (err) {
      status.append(errorBox(err, t('tokens.notRevoked')));
    }
    await refresh().catch((err) => status.append(errorBox(err, t('tokens.notListed'))));
    status.focus();
  };
  const created = async (tok) => {
    replace(status);
    const panel = secretPanel(tok, () => {
      replace(shown);
      document.getElementById('token-label')?.focus();
    });
    replace(shown, panel);
    await refresh().catch((err) => status.append(errorBox(err, t('tokens.notListed'))));
    panel.focus();
  };
  main.append(status, createForm(api, created), shown, list);
  await refresh();
}

// createForm makes a token; created(token) gets the API's answer.
function createForm(api, created) {
  const label = h('input', { id: 'token-label', name: 'label', maxlength: 100, autocomplete: 'off', spellcheck: 'false',
    placeholder: t('tokens.labelPlaceholder') });
  const expiry = h('select', { id: 'token-expiry', name: 'expires_in_days', class: 'narrow' },
    EXPIRIES().map(([days, text]) => {
      const o = h('option', { value: String(days) }, text);
      o.defaultSelected = days === 90; // what the form's reset returns to
      return o;
    }));
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'token-create' }, t('tokens.create'));
  const form = h('form', { class: 'settings-form', id: 'token-form', 'aria-label': t('tokens.newApiToken') },
    h('fieldset', null, h('legend', null, t('tokens.newToken')),
      field('token-label', t('tokens.label'), label, t('tokens.labelHelp')),
      field('token-expiry', t('tokens.expiresAfter'), expiry),
      h('div', { class: 'row' }, submit), status));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status);
    submit.disabled = true;
    try {
      const tok = await api.post('/api/tokens', { label: label.value.trim(), expires_in_days: Number(expiry.value) });
      form.reset();
      await created(tok);
    } catch (err) {
      status.append(errorBox(err, t('tokens.notMade')));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// secretPanel shows a new token's secret once, with a copy button; done
// drops it.
function secretPanel(tok, done) {
  const name = tok.label || tok.id;
  const input = h('input', { id: 'new-token', type: 'text', readonly: true, value: tok.token, class: 'code',
    spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'new-token-help' });
  const said = h('span', { class: 'small', id: 'token-copy-status', role: 'status' });
  const copy = h('button', { type: 'button', id: 'copy-token' }, t('tokens.copy'));
  copy.addEventListener('click', async () => {
    said.textContent = (await copyInput(input)) ? t('tokens.copied') : t('tokens.copyFailed');
  });
  return h('section', { class: 'link-panel token-panel', 'aria-labelledby': 'new-token-h', tabindex: '-1' },
    h('h2', { id: 'new-token-h' }, t('tokens.created', { name })),
    h('label', { for: 'new-token' }, t('tokens.yourNew')),
    h('div', { class: 'row' }, input, copy, said),
    h('p', { class: 'muted small', id: 'new-token-help' },
      tok.expires_at ? t('tokens.shownOnceUntil', { when: when(tok.expires_at) }) : t('tokens.shownOnceNever')),
    h('div', { class: 'row' }, h('button', { type: 'button', id: 'token-done', onclick: done }, t('tokens.done'))));
}

// tokenTable lists the tokens, newest first as the API gives them.
function tokenTable(tokens, revoke) {
  if (!tokens.length) {
    return h('section', { class: 'tokens' }, h('h2', null, t('tokens.yours')), h('p', { class: 'muted' }, t('tokens.none')));
  }
  const now = Date.now();
  const cols = { label: t('tokens.label'), created: t('tokens.colCreated'), expires: t('tokens.colExpires'), id: t('tokens.colId'), actions: t('tokens.colActions') };
  return h('section', { class: 'tokens' }, h('h2', null, tn('tokens.yoursCount', tokens.length)),
    h('div', { class: 'table-wrap' }, h('table', { class: 'stack token-table' },
      h('thead', null, h('tr', null, Object.values(cols).map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, tokens.map((tok) => {
        const expired = tok.expires_at && new Date(tok.expires_at).getTime() <= now;
        const name = tok.label || tok.id;
        const del = h('button', { type: 'button', class: 'danger', 'aria-label': t('tokens.revokeNamed', { name }) }, t('tokens.revoke'));
        del.addEventListener('click', () => revoke(tok, del));
        return h('tr', { 'data-token': tok.id, class: expired ? 'disabled' : null },
          h('th', { scope: 'row', 'data-label': cols.label }, tok.label || h('span', { class: 'muted' }, t('tokens.noLabel'))),
          h('td', { 'data-label': cols.created }, when(tok.created_at)),
          h('td', { 'data-label': cols.expires }, !tok.expires_at ? t('tokens.never')
            : expired ? h('span', { class: 'badge off' }, t('tokens.expired', { when: when(tok.expires_at) })) : when(tok.expires_at)),
          h('td', { 'data-label': cols.id }, h('code', null, tok.id)),
          h('td', { 'data-label': cols.actions, class: 'actions' }, del));
      })))));
}
