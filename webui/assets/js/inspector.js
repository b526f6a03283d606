// Inspector: the request a turn sends the model, laid out — what the model
// saw, what was left out and why, and the sizes against the ceilings.
import { h, heading, errorBox, chars, number, meter, pretty, when, replace } from './dom.js';
import { t, tn, tx } from './i18n.js';

const enc = encodeURIComponent;

export async function render({ api, main, args, query }) {
  main.append(heading(t('ins.title')), h('p', { class: 'lede' }, t('ins.lede')));
  const id = args[0];
  if (!id) {
    await pickConversation(api, main);
    return;
  }
  const [msgs, catalog] = await Promise.all([
    api.get(`/api/conversations/${enc(id)}/messages`),
    api.get('/api/tools').catch(() => null),
  ]);
  const draft = h('textarea', { id: 'draft', name: 'message', rows: 3, value: query.get('message') ?? '' });
  const turnSelect = h('select', { id: 'turn', name: 'turn' },
    h('option', { value: '' }, t('ins.newTurn')),
    pastTurns(msgs?.messages ?? []).map((turn) => h('option', { value: turn.id, selected: turn.id === query.get('turn') }, turn.label)));
  const out = h('div', { class: 'inspection', 'aria-live': 'polite' });
  const form = h('form', { class: 'inspect-form' },
    h('label', { for: 'draft' }, t('ins.draft')), draft,
    h('label', { for: 'turn' }, t('ins.turn')), turnSelect,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, t('ins.inspect')),
      h('a', { href: `#/chat/${enc(id)}` }, t('ins.back'))));
  const run = async () => {
    const q = new URLSearchParams();
    if (turnSelect.value) q.set('turn', turnSelect.value);
    else if (draft.value.trim()) q.set('message', draft.value.trim());
    history.replaceState(null, '', `#/inspect/${enc(id)}${q.size ? '?' + q : ''}`);
    draft.disabled = Boolean(turnSelect.value);
    replace(out, h('p', { class: 'muted' }, t('ins.assembling')));
    try {
      const ins = await api.get(`/api/conversations/${enc(id)}/inspect${q.size ? '?' + q : ''}`);
      replace(out, ...inspection(ins, catalog));
    } catch (err) {
      replace(out, errorBox(err, t('ins.failed')));
    }
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  turnSelect.addEventListener('change', () => { draft.disabled = Boolean(turnSelect.value); });
  main.append(form, out);
  await run();
}

async function pickConversation(api, main) {
  const list = (await api.get('/api/conversations'))?.conversations ?? [];
  main.append(h('h2', null, t('ins.pick')),
    list.length
      ? h('ul', { class: 'conv-list pick-list' }, list.map((c) => h('li', null,
        h('a', { href: `#/inspect/${enc(c.id)}` }, h('span', { class: 'conv-title' }, c.title || t('chat.untitled', { agent: c.agent })),
          h('span', { class: 'conv-meta' }, `${c.agent} · ${when(c.updated_at)}`)))))
      : h('p', null, tx('ins.noConversations', { start: h('a', { href: '#/chat' }, t('ins.startOne')) })));
}

// pastTurns lists the transcript's turns, each named by its first message.
function pastTurns(messages) {
  const turns = new Map();
  for (const m of messages) {
    if (m.role !== 'user' || !m.turn_id || turns.has(m.turn_id)) continue;
    const text = m.content.length > 60 ? m.content.slice(0, 57) + '…' : m.content;
    turns.set(m.turn_id, { id: m.turn_id, label: t('ins.turnLabel', { text, when: when(m.created_at) }) });
  }
  return [...turns.values()].reverse();
}

function section(id, title, ...body) {
  return h('section', { class: 'panel', 'aria-labelledby': id }, h('h2', { id }, title), body);
}

// inspection lays out GET …/inspect's answer.
function inspection(ins, catalog) {
  const sizes = ins.sizes ?? {};
  const tools = ins.tools ?? [];
  const excluded = ins.excluded ?? [];
  const intent = ins.intent ?? [];
  const warnings = ins.warnings ?? [];
  const known = new Map((catalog?.tools ?? []).map((tool) => [tool.name, tool.definition_chars]));
  // why: under Deliberate Tool Mode, the rule that declared each tool.
  const why = new Map((ins.declared ?? []).map((d) => [d.name, d.reason]));
  return [
    section('ins-summary', t('ins.request'),
      h('dl', { class: 'facts' },
        h('dt', null, t('ins.agent')), h('dd', null, ins.agent || '—'),
        h('dt', null, t('ins.model')), h('dd', null, ins.model || '—'),
        h('dt', null, t('ins.turn')), h('dd', null, ins.turn_id || t('ins.notRun'))),
      h('div', { class: 'gauges' },
        meter(t('ins.alwaysOn'), sizes.always_paid_chars ?? 0, catalog?.always_paid_ceiling ?? 0),
        meter(t('ins.allDeclared'), sizes.definitions_chars ?? 0, catalog?.widest_ceiling ?? 0),
        meter(t('ins.system'), sizes.system_chars ?? 0, 0),
        meter(t('ins.context'), sizes.context_chars ?? 0, 0))),
    warnings.length
      ? section('ins-warnings', t('ins.warnings'), h('ul', { class: 'warnings' }, warnings.map((w) => h('li', null, w))))
      : null,
    ins.history ? historySection(ins.history) : null,
    section('ins-tools', t('ins.declared', { n: tools.length }),
      tools.length ? toolsTable(tools, known, why, ins.origins ?? []) : h('p', null, t('ins.noTools'))),
    section('ins-excluded', t('ins.leftOut', { n: excluded.length }),
      excluded.length ? excludedTable(excluded) : h('p', null, t('ins.nothingLeftOut'))),
    section('ins-intent', t('ins.dtm'),
      intent.length ? intentTable(intent) : h('p', null, t('ins.noMatches'))),
    section('ins-system', t('ins.systemSize', { n: number(sizes.system_chars ?? chars(ins.system)) }),
      h('pre', { class: 'prompt', tabindex: '0' }, ins.system ?? '')),
    section('ins-context', t('ins.contextSize', { n: number(sizes.context_chars ?? chars(ins.context)) }),
      h('pre', { class: 'prompt', tabindex: '0' }, ins.context ?? '')),
  ];
}

// historySection says how the turn's first model call fits the model's
// context window, and shows the marker the model sees when earlier
// messages are left out.
function historySection(hist) {
  const win = hist.window ?? {};
  const size = t('ins.historySize', { tokens: number(hist.tokens ?? 0), window: number(win.tokens ?? 0), reserve: number(win.reserve ?? 0) });
  return section('ins-history', t('ins.history'),
    h('p', null, hist.dropped
      ? tn('ins.dropped', hist.dropped, { size })
      : t('ins.wholeHistory', { size })),
    hist.marker ? h('pre', { class: 'prompt', tabindex: '0' }, hist.marker) : null);
}

// table is a table with a header row and one row per item; cells(item)
// returns the row's cells, the first of which heads the row. A header
// given as [text] is a number column's.
function table(cls, headers, items, cells) {
  return h('div', { class: 'table-wrap' }, h('table', { class: cls },
    h('thead', null, h('tr', null, headers.map((x) => h('th', { scope: 'col', class: Array.isArray(x) ? 'num' : null }, x)))),
    h('tbody', null, items.map((it) => h('tr', null, cells(it))))));
}

// toolsTable lists the declared tools; why maps a tool to the rule that
// declared it under Deliberate Tool Mode, and a tool of an MCP server says
// which server and which of its tools the name the model calls maps to;
// both are shown beneath its name.
function toolsTable(tools, known, why, origins) {
  const from = new Map(origins.map((o) => [o.name, o]));
  return table('tools-table', [t('ins.colTool'), [t('ins.colSize')], t('ins.colDescription')], tools, (tool) => [
    h('th', { scope: 'row' }, h('code', null, tool.name),
      why.has(tool.name) ? h('div', { class: 'why muted small' }, why.get(tool.name)) : null,
      from.has(tool.name) ? h('div', { class: 'origin muted small' },
        tx('ins.origin', { server: h('code', null, from.get(tool.name).server), tool: h('code', null, from.get(tool.name).tool) })) : null),
    h('td', { class: 'num' }, number(known.get(tool.name) ?? chars(JSON.stringify(tool)))),
    h('td', null, h('div', { class: 'desc' }, tool.description),
      h('details', null, h('summary', null, t('ins.parameters')), h('pre', { tabindex: '0' }, pretty(tool.parameters)))),
  ]);
}

function excludedTable(excluded) {
  return table('excluded', [t('ins.colTool'), t('ins.colReason')], excluded, (x) => [
    h('th', { scope: 'row' }, h('code', null, x.name)),
    h('td', null, x.reason),
  ]);
}

function intentTable(intent) {
  return table('intent', [t('ins.colFamily'), t('ins.colTrigger'), t('ins.colSource')], intent, (m) => [
    h('td', null, m.family),
    h('td', null, h('q', null, m.trigger)),
    h('td', null, m.source),
  ]);
}
