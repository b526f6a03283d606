// People (admins): the organisation's users with their role and status;
// invite someone (a one-time login link, shown once), edit a user or
// change their role, make a new login link, disable a user or enable a
// disabled one again, or erase a user for good. Below them, the monthly
// budgets (budget.js).
import { h, heading, errorBox, field, when, confirm, copyInput, replace } from './dom.js';
import { t, tn } from './i18n.js';
import * as budget from './budget.js';

const enc = encodeURIComponent;

const ROLES = () => [['member', t('people.member')], ['admin', t('people.admin')]];

export async function render({ api, me, main, refreshMe }) {
  main.append(heading(t('people.title')));
  if (me.role !== 'admin') {
    main.append(h('p', null, t('people.adminsOnly')));
    return;
  }
  main.append(h('p', { class: 'lede' }, t('people.lede')));
  const status = h('div', { class: 'form-status', id: 'people-status', 'aria-live': 'polite' });
  const linkSlot = h('div', { id: 'link-slot' });
  const list = h('div', { class: 'people' });
  const editSlot = h('div', { id: 'edit-slot' });
  const zones = h('datalist', { id: 'zones' },
    (Intl.supportedValuesOf?.('timeZone') ?? []).map((z) => h('option', { value: z })));

  const budgets = budget.manage(api);
  // refresh lists the users, then the budgets with their names.
  const refresh = async () => {
    const users = (await api.get('/api/users'))?.users ?? [];
    replace(list, userTable(users, me, { edit, link, disable, enable, erase }));
    await budgets.refresh(users);
  };
  // act runs one change and refreshes the list; its failure (the API's
  // message, such as the last admin's) goes to status. It answers true
  // only when the change succeeded and no later action has started since,
  // so a slow earlier action never writes its message over a newer one.
  let generation = 0;
  const act = async (what, fn) => {
    const mine = ++generation;
    replace(status);
    try {
      await fn();
      await refresh();
      return mine === generation;
    } catch (err) {
      if (mine === generation) status.append(errorBox(err, what));
      return false;
    }
  };
  const showLink = (who, res) => {
    replace(linkSlot, linkPanel(who, res.login_link, res.expires_at, () => replace(linkSlot)));
    linkSlot.firstChild.focus();
  };
  // A new login link changes nothing the list shows.
  const link = async (u) => {
    replace(status);
    try {
      showLink(u.display_name, await api.post(`/api/users/${enc(u.id)}/login-link`));
    } catch (err) {
      status.append(errorBox(err, t('people.noLink')));
    }
  };
  const disable = async (u, button) => {
    if (!(await confirm(t('people.disableQuestion', { name: u.display_name }), t('mcp.disable')))) {
      button.focus();
      return;
    }
    if (await act(t('mcp.notDisabled'), () => api.del(`/api/users/${enc(u.id)}`))) {
      status.append(h('p', { class: 'ok' }, t('people.disabledNamed', { name: u.display_name })));
    }
    main.querySelector('h1').focus();
  };
  // Erasing cannot be undone: the question says what goes and what stays.
  const erase = async (u, button) => {
    const name = u.display_name || u.id;
    if (!(await confirm(t('people.eraseQuestion', { name }), t('people.erase')))) {
      button.focus();
      return;
    }
    if (await act(t('people.notErased', { name }), () => api.post(`/api/users/${enc(u.id)}/erase`))) {
      status.append(h('p', { class: 'ok' }, t('people.erasedNamed', { name })));
    }
    main.querySelector('h1').focus();
  };
  // Enabling asks nothing: it is undone by Disable, and gives no access
  // until someone makes the user a new login link, which is where focus
  // goes.
  const enable = async (u) => {
    const name = u.display_name || u.id;
    if (await act(t('people.notEnabled', { name }), () => api.post(`/api/users/${enc(u.id)}/enable`))) {
      status.append(h('p', { class: 'ok' }, t('people.enabledNamed', { name })));
      list.querySelector(`tr[data-user="${CSS.escape(u.id)}"] button.new-link`)?.focus();
    }
  };
  const edit = (u) => {
    replace(editSlot, editForm(u, me, {
      close: () => replace(editSlot),
      save: async (changes) => {
        replace(status);
        try {
          await api.patch(`/api/users/${enc(u.id)}`, changes);
        } catch (err) {
          status.append(errorBox(err, t('people.notSaved', { name: u.display_name })));
          return false;
        }
        replace(editSlot);
        // Yourself: the header shows the new name; a new member leaves
        // this admins' page.
        if (u.id === me.user_id && (await refreshMe().catch(() => null))?.role === 'member') {
          location.hash = '#/chat';
          return true;
        }
        status.append(h('p', { class: 'ok' }, t('people.saved', { name: changes.display_name ?? u.display_name })));
        await refresh().catch((err) => status.append(errorBox(err, t('people.reloadFailed'))));
        return true;
      },
    }));
    editSlot.querySelector('input').focus();
  };

  main.append(status, linkSlot, list, editSlot, inviteForm(api, {
    invited: async (res) => {
      showLink(res.user?.display_name ?? t('people.them'), res);
      await refresh();
    },
  }), budgets.el, zones);
  await refresh();
}

function userTable(users, me, { edit, link, disable, enable, erase }) {
  if (!users.length) return h('p', null, t('people.nobody'));
  const cols = [t('mcp.colName'), t('people.department'), t('prefs.timezone'), t('people.role'), t('mcp.colStatus'), t('mcp.colActions')];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'stack people-table' },
    h('caption', null, tn('people.count', users.length)),
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', null, users.map((u) => {
      const name = u.display_name || u.id;
      const actions = [];
      if (!u.disabled) {
        actions.push(
          h('button', { type: 'button', onclick: () => edit(u), 'aria-label': t('people.editNamed', { name }) }, t('people.edit')),
          h('button', { type: 'button', class: 'new-link', onclick: () => link(u), 'aria-label': t('people.newLinkNamed', { name }) },
            t('people.newLink')));
      } else {
        actions.push(h('button', { type: 'button', onclick: () => enable(u), 'aria-label': t('mcp.enableNamed', { name }) }, t('mcp.enable')));
      }
      // Nobody disables themselves (another admin can).
      if (!u.disabled && u.id !== me.user_id) {
        const del = h('button', { type: 'button', class: 'danger', 'aria-label': t('mcp.disableNamed', { name }) }, t('mcp.disable'));
        del.addEventListener('click', () => disable(u, del));
        actions.push(del);
      }
      // Nor erases themselves; a disabled user can be erased too.
      if (u.id !== me.user_id) {
        const gone = h('button', { type: 'button', class: 'danger erase', 'aria-label': t('people.eraseNamed', { name }) }, t('people.erase'));
        gone.addEventListener('click', () => erase(u, gone));
        actions.push(gone);
      }
      return h('tr', { 'data-user': u.id, class: u.disabled ? 'disabled' : null },
        h('th', { scope: 'row', 'data-label': cols[0] }, name, u.id === me.user_id ? h('span', { class: 'muted' }, ' ', t('people.you')) : null),
        h('td', { 'data-label': cols[1] }, u.department || '—'),
        h('td', { 'data-label': cols[2] }, u.timezone || '—'),
        h('td', { 'data-label': cols[3] }, h('span', { class: u.role === 'admin' ? 'badge role-admin' : 'badge' }, roleName(u.role))),
        h('td', { 'data-label': cols[4] }, u.disabled
          ? h('span', { class: 'badge off' }, t('mcp.disabled'))
          : h('span', { class: 'badge on' }, t('people.active'))),
        h('td', { 'data-label': cols[5], class: 'actions' }, actions.length ? actions : h('span', { class: 'muted' }, '—')));
    }))));
}

function roleName(role) {
  return new Map(ROLES()).get(role) ?? role;
}

function roleSelect(id, value) {
  return h('select', { id, name: 'role' }, ROLES().map(([v, l]) => h('option', { value: v, selected: v === value }, l)));
}

// personFields are the inputs a user has: name, department, timezone, role.
function personFields(prefix, u) {
  const input = (name, value, attrs) => h('input', { id: `${prefix}-${name}`, name, value: value ?? '', autocomplete: 'off', ...attrs });
  return {
    display_name: input('display_name', u.display_name, { required: true, maxlength: 100 }),
    department: input('department', u.department, { maxlength: 100 }),
    timezone: input('timezone', u.timezone, { list: 'zones', maxlength: 64, spellcheck: 'false', placeholder: 'Area/City' }),
    role: roleSelect(`${prefix}-role`, u.role ?? 'member'),
  };
}

function fieldsOf(prefix, f) {
  return [
    field(`${prefix}-display_name`, t('prefs.name'), f.display_name),
    field(`${prefix}-department`, t('prefs.department'), f.department),
    field(`${prefix}-timezone`, t('prefs.timezone'), f.timezone, t('people.zoneHelp')),
    field(`${prefix}-role`, t('people.role'), f.role),
  ];
}

function inviteForm(api, { invited }) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const defaultZone = zone && zone !== 'Etc/Unknown' ? zone : '';
  const f = personFields('invite', { timezone: defaultZone });
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('people.invite'));
  const form = h('form', { class: 'person-form', id: 'invite' },
    h('fieldset', null, h('legend', null, t('people.inviteLegend')),
      h('p', { class: 'muted small' }, t('people.inviteHelp')),
      fieldsOf('invite', f), h('div', { class: 'row' }, submit), status));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status);
    submit.disabled = true;
    try {
      const res = await api.post('/api/users', {
        display_name: f.display_name.value.trim(), department: f.department.value.trim(),
        timezone: f.timezone.value.trim(), role: f.role.value,
      });
      form.reset();
      f.timezone.value = defaultZone;
      await invited(res);
    } catch (err) {
      status.append(errorBox(err, t('people.notInvited')));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// editForm changes one user; save(changes) gets only the changed fields
// and resolves true when they were saved. Making yourself a member asks
// first.
function editForm(u, me, { close, save }) {
  const f = personFields('edit', u);
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('common.save'));
  const form = h('form', { class: 'person-form', id: 'edit-user', 'data-user': u.id },
    h('fieldset', null, h('legend', null, t('people.editNamed', { name: u.display_name || u.id })), fieldsOf('edit', f),
      h('div', { class: 'row' }, submit, h('button', { type: 'button', onclick: close }, t('common.cancel'))), status));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status);
    const changes = {};
    for (const k of ['display_name', 'department', 'timezone', 'role']) {
      const v = f[k].value.trim();
      if (v !== (u[k] ?? '')) changes[k] = v;
    }
    if (!Object.keys(changes).length) {
      status.append(h('p', { class: 'muted' }, t('prefs.nothingChanged')));
      return;
    }
    if (u.id === me.user_id && changes.role === 'member' &&
        !(await confirm(t('people.demoteQuestion'), t('people.demote')))) {
      f.role.focus();
      return;
    }
    submit.disabled = true;
    if (!(await save(changes))) submit.disabled = false;
  });
  return form;
}

// linkPanel shows a login link once, as an absolute URL with a copy
// button; nothing else shows it again.
function linkPanel(who, path, expiresAt, done) {
  const url = new URL(path, location.origin).href;
  const input = h('input', { id: 'login-link', type: 'text', readonly: true, value: url, class: 'code',
    spellcheck: 'false', 'aria-describedby': 'login-link-help' });
  const said = h('span', { class: 'small', id: 'copy-status', role: 'status' });
  const copy = h('button', { type: 'button', id: 'copy-link' }, t('people.copyLink'));
  copy.addEventListener('click', async () => {
    said.textContent = (await copyInput(input)) ? t('people.copied') : t('people.copyFailed');
  });
  return h('section', { class: 'link-panel', 'aria-labelledby': 'login-link-h', tabindex: '-1' },
    h('h2', { id: 'login-link-h' }, t('people.linkFor', { name: who })),
    h('label', { for: 'login-link' }, t('people.oneTimeLink')),
    h('div', { class: 'row' }, input, copy, said),
    h('p', { class: 'muted small', id: 'login-link-help' },
      expiresAt ? t('people.linkHelpUntil', { when: when(expiresAt), name: who }) : t('people.linkHelp', { name: who })),
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: done }, t('people.done'))));
}
