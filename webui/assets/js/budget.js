// Monthly budgets (docs/budget.md). mine is the "Your budget this month"
// section of Preferences (GET /api/budget, every signed-in user): spend
// against each limit with what is left, and the day it resets. manage is
// the "Monthly budgets" section of People (admins): the organisation's
// budget, the default for each person and each person's own, with this
// month's spend, set (PUT /api/budgets/{who}) and removed (DELETE).
//
// Money is in millionths of the prices' currency unit (cost_micros) and
// shown as $ with two decimals; tokens as whole numbers. A limit of 0 is
// none in that unit.
import { h, errorBox, field, confirm, replace } from './dom.js';
import { t, tn, formatNumber, locale } from './i18n.js';

const enc = encodeURIComponent;

// MAX_LIMIT is the largest limit the API takes, in either unit.
const MAX_LIMIT = 1e15;

// money formats micros as $ with two decimals.
export function money(micros) {
  return '$' + new Intl.NumberFormat(locale(), { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format((micros ?? 0) / 1e6);
}

// tokens formats a token count.
function tokens(n) {
  return t('budget.tokens', { n: formatNumber(n ?? 0) });
}

// resetDay is the day a month ending at end (exclusive, UTC) resets.
function resetDay(end) {
  const d = new Date(end);
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleDateString(locale(), { dateStyle: 'long', timeZone: 'UTC' });
}

// gauge is one unit's spend against its limit: a bar (hidden from
// assistive technology) and its text, which says what is left.
function gauge(label, used, limit, fmt) {
  if (!(limit > 0)) {
    return h('div', { class: 'gauge' }, h('span', { class: 'gauge-label' }, label),
      h('span', { class: 'gauge-text' }, t('budget.spentNoLimit', { used: fmt(used) })));
  }
  const over = used >= limit;
  return h('div', { class: over ? 'gauge over' : 'gauge' }, h('span', { class: 'gauge-label' }, label),
    h('meter', { min: 0, max: limit, high: limit * 0.85, optimum: 0, value: Math.min(used, limit), 'aria-hidden': 'true' }),
    h('span', { class: 'gauge-text' }, over
      ? t('budget.spentOver', { used: fmt(used), limit: fmt(limit) })
      : t('budget.spentLeft', { used: fmt(used), limit: fmt(limit), left: fmt(limit - used) })));
}

// statusBlock is one budget's gauges (money, tokens) and its call count.
function statusBlock(id, title, note, s) {
  const lim = s?.limit ?? {};
  const sp = s?.spent ?? {};
  return h('div', { class: 'budget-status', id },
    h('h3', null, title),
    note ? h('p', { class: 'muted small' }, note) : null,
    h('div', { class: 'gauges' },
      gauge(t('budget.money'), sp.cost_micros ?? 0, lim.cost_micros ?? 0, money),
      gauge(t('budget.tokensLabel'), sp.tokens ?? 0, lim.tokens ?? 0, tokens)),
    h('p', { class: 'muted small' }, tn('budget.calls', sp.calls ?? 0)));
}

function sourceNote(source) {
  switch (source) {
    case 'own': return t('budget.sourceOwn');
    case 'default': return t('budget.sourceDefault');
    default: return t('budget.sourceNone');
  }
}

// mine is the caller's month; a failure to read it stays inside the
// section.
export async function mine(api) {
  const body = h('div', { id: 'my-budget-body' });
  const el = h('section', { class: 'budget', id: 'my-budget', 'aria-labelledby': 'my-budget-h' },
    h('h2', { id: 'my-budget-h' }, t('budget.mineTitle')), body);
  try {
    const b = await api.get('/api/budget');
    replace(body,
      h('p', { id: 'my-budget-reset' }, t('budget.resets', { day: resetDay(b?.month_end) })),
      b?.exceeded ? h('p', { class: 'alert', id: 'my-budget-exceeded' }, b.exceeded) : null,
      statusBlock('my-budget-you', t('budget.you'), sourceNote(b?.you?.source), b?.you),
      statusBlock('my-budget-org', t('budget.organisation'), null, b?.organisation));
  } catch (err) {
    replace(body, errorBox(err, t('budget.notRead')));
  }
  return el;
}

// parseMoney reads a decimal amount ("" is 0) as micros, or null.
export function parseMoney(s) {
  const m = /^(\d{1,9})(?:\.(\d{0,6}))?$|^\.(\d{1,6})$/.exec(s);
  if (!m) return null;
  const whole = Number(m[1] ?? 0);
  const frac = Number(((m[2] ?? m[3] ?? '') + '000000').slice(0, 6));
  return whole * 1e6 + frac;
}

// parseTokens reads a whole number ("" is 0), or null.
export function parseTokens(s) {
  if (!/^\d{1,16}$/.test(s)) return null;
  const n = Number(s);
  return n <= MAX_LIMIT ? n : null;
}

// limitText is a limit in words: its units, or "No limit".
function limitText(b) {
  const parts = [];
  if (b?.cost_micros > 0) parts.push(money(b.cost_micros));
  if (b?.tokens > 0) parts.push(tokens(b.tokens));
  return parts.length ? parts.join(' · ') : t('budget.noLimit');
}

function spentText(sp) {
  if (!sp) return '—';
  return [money(sp.cost_micros), tokens(sp.tokens), tn('budget.calls', sp.calls ?? 0)].join(' · ');
}

// manage is the admins' section; refresh(users) lists the budgets again
// with the people's names (users: GET /api/users).
export function manage(api) {
  let users = [];
  let budgets = [];
  // orgSpent is the organisation's spend (GET /api/budget), shown when it
  // has no budget of its own.
  let orgSpent = null;
  const status = h('div', { class: 'form-status', id: 'budgets-status', 'aria-live': 'polite' });
  const list = h('div', { id: 'budgets-list' });
  const formSlot = h('div', { id: 'budget-form-slot' });
  const el = h('section', { class: 'budgets', id: 'budgets', 'aria-labelledby': 'budgets-h' },
    h('h2', { id: 'budgets-h' }, t('budget.manageTitle')),
    h('p', { class: 'muted' }, t('budget.manageLede')),
    status, list, formSlot);

  const nameOf = (who) => {
    if (who === 'organisation') return t('budget.organisation');
    if (who === 'default') return t('budget.eachPerson');
    const u = users.find((x) => x.id === who);
    return u?.display_name || who;
  };
  const load = async () => {
    const [listed, mine] = await Promise.all([api.get('/api/budgets'), api.get('/api/budget')]);
    budgets = listed?.budgets ?? [];
    orgSpent = mine?.organisation?.spent ?? null;
    replace(list, table());
    replace(formSlot, form());
  };
  const refresh = async (us) => {
    if (us) users = us;
    try {
      await load();
    } catch (err) {
      replace(list, errorBox(err, t('budget.notListed')));
    }
  };
  const remove = async (who, button) => {
    if (!(await confirm(t('budget.removeQuestion', { name: nameOf(who) }), t('budget.remove')))) {
      button.focus();
      return;
    }
    replace(status);
    try {
      await api.del(`/api/budgets/${enc(who)}`);
      await load();
      status.append(h('p', { class: 'ok' }, t('budget.removed', { name: nameOf(who) })));
    } catch (err) {
      status.append(errorBox(err, t('budget.notRemoved')));
    }
  };
  const change = (who) => {
    const f = formSlot.querySelector('form');
    const b = budgets.find((x) => x.who === who);
    f.elements.who.value = who;
    f.elements.cost.value = b?.cost_micros ? String(b.cost_micros / 1e6) : '';
    f.elements.tokens.value = b?.tokens ? String(b.tokens) : '';
    f.elements.cost.focus();
  };

  // table lists the organisation's and the default's rows always (unset:
  // "No limit"), then each person's own budget.
  const table = () => {
    const byWho = new Map(budgets.map((b) => [b.who, b]));
    const rows = ['organisation', 'default', ...budgets.map((b) => b.who).filter((w) => w !== 'organisation' && w !== 'default')];
    const cols = [t('budget.colWho'), t('budget.colLimit'), t('budget.colSpent'), t('mcp.colActions')];
    return h('div', { class: 'table-wrap' }, h('table', { class: 'stack budgets-table' },
      h('caption', null, t('budget.caption')),
      h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, rows.map((who) => {
        const b = byWho.get(who);
        const name = nameOf(who);
        const actions = [h('button', { type: 'button', class: 'change-budget', onclick: () => change(who),
          'aria-label': b ? t('budget.changeNamed', { name }) : t('budget.setNamed', { name }) }, b ? t('budget.change') : t('budget.set'))];
        if (b) {
          const del = h('button', { type: 'button', class: 'danger remove-budget', 'aria-label': t('budget.removeNamed', { name }) }, t('budget.remove'));
          del.addEventListener('click', () => remove(who, del));
          actions.push(del);
        }
        return h('tr', { 'data-who': who },
          h('th', { scope: 'row', 'data-label': cols[0] }, name),
          h('td', { 'data-label': cols[1] }, limitText(b)),
          h('td', { 'data-label': cols[2] }, who === 'default' ? t('budget.defaultSpent') : spentText(b?.spent ?? (who === 'organisation' ? orgSpent : null))),
          h('td', { 'data-label': cols[3], class: 'actions' }, actions));
      }))));
  };

  // form sets one budget: whose, money (a decimal amount) and tokens (a
  // whole number), each empty or 0 for no limit in that unit.
  const form = () => {
    const who = h('select', { id: 'budget-who', name: 'who' },
      h('option', { value: 'organisation' }, t('budget.organisation')),
      h('option', { value: 'default' }, t('budget.eachPerson')),
      users.filter((u) => !u.disabled).map((u) => h('option', { value: u.id }, u.display_name || u.id)));
    const cost = h('input', { id: 'budget-cost', name: 'cost', inputmode: 'decimal', autocomplete: 'off', placeholder: '5.00' });
    const toks = h('input', { id: 'budget-tokens', name: 'tokens', inputmode: 'numeric', autocomplete: 'off', placeholder: '1000000' });
    const note = h('div', { class: 'form-status', id: 'budget-form-status', 'aria-live': 'polite' });
    const submit = h('button', { type: 'submit', class: 'primary', id: 'budget-save' }, t('common.save'));
    const f = h('form', { class: 'person-form', id: 'budget-form', novalidate: true },
      h('fieldset', null, h('legend', null, t('budget.setLegend')),
        field('budget-who', t('budget.for'), who),
        field('budget-cost', t('budget.moneyLimit'), cost, t('budget.moneyHelp')),
        field('budget-tokens', t('budget.tokenLimit'), toks, t('budget.tokenHelp')),
        h('div', { class: 'row' }, submit), note));
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      replace(note);
      replace(status);
      const c = parseMoney(cost.value.trim());
      const n = parseTokens(toks.value.trim() === '' ? '0' : toks.value.trim());
      let invalid = null;
      if (c === null && cost.value.trim() !== '') invalid = [cost, t('budget.badMoney')];
      else if (n === null) invalid = [toks, t('budget.badTokens')];
      else if (!(c > 0) && !(n > 0)) invalid = [cost, t('budget.noUnit')];
      if (invalid) {
        note.append(h('p', { class: 'alert', role: 'alert', id: 'budget-invalid' }, invalid[1]));
        invalid[0].focus();
        return;
      }
      const target = who.value;
      submit.disabled = true;
      try {
        await api.put(`/api/budgets/${enc(target)}`, { cost_micros: c ?? 0, tokens: n });
      } catch (err) {
        submit.disabled = false;
        note.append(errorBox(err, t('budget.notSaved')));
        return;
      }
      await refresh();
      status.append(h('p', { class: 'ok' }, t('budget.saved', { name: nameOf(target) })));
    });
    return f;
  };

  return { el, refresh };
}
