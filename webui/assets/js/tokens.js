// API tokens (every signed-in user, under Preferences): make a personal
// token for a program (POST /api/tokens; its secret is shown this once,
// with a copy button), list your tokens (GET /api/tokens: labels and
// dates, never secrets) and revoke one (DELETE /api/tokens/{id}).
//
// The secret lives only in the panel that shows it: it is never stored
// (no localStorage, no URL), and leaving the page or pressing Done drops
// it.
import { h, heading, errorBox, field, when, confirm, copyText, replace } from './dom.js';

const enc = encodeURIComponent;

// EXPIRIES are the lifetimes offered, in days (0: never).
const EXPIRIES = [[30, '30 days'], [90, '90 days'], [365, 'One year'], [0, 'Never']];

export async function render({ api, main }) {
  main.append(heading('API tokens'),
    h('p', { class: 'lede' }, 'A program uses a token instead of signing in: it sends ',
      h('code', null, 'Authorization: Bearer <token>'), ' with each request to the API. ',
      'A token acts as you, with your role, in your organisation, until it expires or you revoke it.'),
    h('p', null, h('a', { href: '#/preferences' }, 'Back to your preferences')));
  const status = h('div', { class: 'form-status', id: 'tokens-status', 'aria-live': 'polite', tabindex: '-1' });
  const shown = h('div', { id: 'new-token-holder' });
  const list = h('div', { id: 'token-list' });
  const refresh = async () => {
    const tokens = (await api.get('/api/tokens'))?.tokens ?? [];
    replace(list, tokenTable(tokens, revoke));
  };
  // revoke asks first, then deletes the token and lists again.
  const revoke = async (t, button) => {
    const name = t.label || t.id;
    if (!(await confirm(`Revoke the token “${name}”? Programs that use it stop working at once.`, 'Revoke token'))) {
      button.focus();
      return;
    }
    replace(status);
    try {
      await api.del(`/api/tokens/${enc(t.id)}`);
      status.append(h('p', { class: 'ok' }, `Revoked “${name}”.`));
    } catch (err) {
      status.append(errorBox(err, 'Not revoked'));
    }
    await refresh().catch((err) => status.append(errorBox(err, 'The tokens could not be listed')));
    status.focus();
  };
  const created = async (tok) => {
    replace(status);
    const panel = secretPanel(tok, () => {
      replace(shown);
      document.getElementById('token-label')?.focus();
    });
    replace(shown, panel);
    await refresh().catch((err) => status.append(errorBox(err, 'The tokens could not be listed')));
    panel.focus();
  };
  main.append(status, createForm(api, created), shown, list);
  await refresh();
}

// createForm makes a token; created(token) gets the API's answer.
function createForm(api, created) {
  const label = h('input', { id: 'token-label', name: 'label', maxlength: 100, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'ci, laptop, backup script' });
  const expiry = h('select', { id: 'token-expiry', name: 'expires_in_days', class: 'narrow' },
    EXPIRIES.map(([days, text]) => {
      const o = h('option', { value: String(days) }, text);
      o.defaultSelected = days === 90; // what the form's reset returns to
      return o;
    }));
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'token-create' }, 'Create token');
  const form = h('form', { class: 'settings-form', id: 'token-form', 'aria-label': 'New API token' },
    h('fieldset', null, h('legend', null, 'New token'),
      field('token-label', 'Label', label, 'What the token is for, so you know which to revoke later.'),
      field('token-expiry', 'Expires after', expiry),
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
      status.append(errorBox(err, 'No token made'));
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
  const copy = h('button', { type: 'button', id: 'copy-token' }, 'Copy token');
  copy.addEventListener('click', async () => {
    said.textContent = (await copyText(input)) ? 'Copied.' : 'Copying did not work here: select the token and copy it.';
  });
  return h('section', { class: 'link-panel token-panel', 'aria-labelledby': 'new-token-h', tabindex: '-1' },
    h('h2', { id: 'new-token-h' }, `Token “${name}” created`),
    h('label', { for: 'new-token' }, 'Your new token'),
    h('div', { class: 'row' }, input, copy, said),
    h('p', { class: 'muted small', id: 'new-token-help' },
      'Copy it now: this is the only time it is shown, here or anywhere. ',
      tok.expires_at ? `It works until ${when(tok.expires_at)}.` : 'It never expires.',
      ' Keep it as you would a password.'),
    h('div', { class: 'row' }, h('button', { type: 'button', id: 'token-done', onclick: done }, 'Done')));
}

// tokenTable lists the tokens, newest first as the API gives them.
function tokenTable(tokens, revoke) {
  if (!tokens.length) {
    return h('section', { class: 'tokens' }, h('h2', null, 'Your tokens'), h('p', { class: 'muted' }, 'You have no API tokens.'));
  }
  const now = Date.now();
  return h('section', { class: 'tokens' }, h('h2', null, `Your tokens (${tokens.length})`),
    h('div', { class: 'table-wrap' }, h('table', { class: 'stack token-table' },
      h('thead', null, h('tr', null, ['Label', 'Created', 'Expires', 'ID', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, tokens.map((t) => {
        const expired = t.expires_at && new Date(t.expires_at).getTime() <= now;
        const name = t.label || t.id;
        const del = h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${name}` }, 'Revoke');
        del.addEventListener('click', () => revoke(t, del));
        return h('tr', { 'data-token': t.id, class: expired ? 'disabled' : null },
          h('th', { scope: 'row', 'data-label': 'Label' }, t.label || h('span', { class: 'muted' }, 'No label')),
          h('td', { 'data-label': 'Created' }, when(t.created_at)),
          h('td', { 'data-label': 'Expires' }, !t.expires_at ? 'Never'
            : expired ? h('span', { class: 'badge off' }, `Expired ${when(t.expires_at)}`) : when(t.expires_at)),
          h('td', { 'data-label': 'ID' }, h('code', null, t.id)),
          h('td', { 'data-label': 'Actions', class: 'actions' }, del));
      })))));
}
