// Inspector: the request a turn sends the model, laid out — a summary of
// what people come for first (the declared tools and their sizes against
// the ceilings, the tools left out and why, what Deliberate Tool Mode
// matched), then each model call as it was sent (the messages, earlier
// tool results included, and the definitions), then the details.
//
// Three ways in: a conversation's draft or past turn
// (#/inspect/ID[?message=M|?turn=T], GET /api/conversations/{id}/inspect),
// an agent with a draft message and no conversation
// (#/inspect?agent=NAME[&message=M], GET /api/agents/{name}/inspect), and
// the page that picks one of those (#/inspect). Nothing runs and nothing
// is saved. A draft has no turn id; none is made up for it.
import { h, heading, errorBox, chars, number, meter, pretty, when, replace } from './dom.js';
import { t, tn, tx } from './i18n.js';

const enc = encodeURIComponent;

export async function render({ api, main, args, query }) {
  main.append(heading(t('ins.title')), h('p', { class: 'lede' }, t('ins.lede')));
  const id = args[0];
  if (id) {
    await conversationInspector(api, main, id, query);
    return;
  }
  if (query.get('agent')) {
    await agentInspector(api, main, query.get('agent'), query);
    return;
  }
  await pick(api, main);
}

// pick lists the conversations to inspect, and the agents to inspect
// with a draft message.
async function pick(api, main) {
  const [list, agents] = await Promise.all([
    api.get('/api/conversations').then((r) => r?.conversations ?? []),
    api.get('/api/agents').then((r) => r?.agents ?? []).catch(() => []),
  ]);
  main.append(h('h2', null, t('ins.pick')),
    list.length
      ? h('ul', { class: 'conv-list pick-list' }, list.map((c) => h('li', null,
        h('a', { href: `#/inspect/${enc(c.id)}` }, h('span', { class: 'conv-title' }, c.title || t('chat.untitled', { agent: c.agent })),
          h('span', { class: 'conv-meta' }, `${c.agent} · ${when(c.updated_at)}`)))))
      : h('p', null, tx('ins.noConversations', { start: h('a', { href: '#/chat' }, t('ins.startOne')) })));
  if (agents.length) {
    main.append(h('h2', null, t('ins.pickAgent')),
      h('p', { class: 'muted' }, t('ins.pickAgentHelp')),
      h('ul', { class: 'agent-list', id: 'inspect-agents' }, agents.map((a) => h('li', null,
        h('a', { href: `#/inspect?agent=${enc(a.name)}` }, h('code', null, a.name))))));
  }
}

// conversationInspector inspects a draft message or a past turn of the
// conversation id.
async function conversationInspector(api, main, id, query) {
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
    await show(out, () => api.get(`/api/conversations/${enc(id)}/inspect${q.size ? '?' + q : ''}`), catalog);
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  turnSelect.addEventListener('change', () => { draft.disabled = Boolean(turnSelect.value); });
  main.append(form, out);
  await run();
}

// agentInspector inspects what a draft message would send to the agent
// name in a new conversation, which is not created.
async function agentInspector(api, main, name, query) {
  const [agents, catalog] = await Promise.all([
    api.get('/api/agents').then((r) => r?.agents ?? []).catch(() => []),
    api.get('/api/tools').catch(() => null),
  ]);
  const names = agents.map((a) => a.name);
  if (!names.includes(name)) names.unshift(name);
  const agentSelect = h('select', { id: 'inspect-agent', name: 'agent' },
    names.map((n) => h('option', { value: n, selected: n === name }, n)));
  const draft = h('textarea', { id: 'draft', name: 'message', rows: 3, value: query.get('message') ?? '',
    'aria-describedby': 'draft-help' });
  const out = h('div', { class: 'inspection', 'aria-live': 'polite' });
  const form = h('form', { class: 'inspect-form', id: 'agent-inspect' },
    h('label', { for: 'inspect-agent' }, t('ins.agent')), agentSelect,
    h('label', { for: 'draft' }, t('ins.draft')), draft,
    h('p', { class: 'muted small', id: 'draft-help' }, t('ins.draftHelp')),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, t('ins.inspect')),
      h('a', { href: `#/agents/${enc(agentSelect.value)}` }, t('ins.theAgent'))));
  const run = async () => {
    const q = new URLSearchParams({ agent: agentSelect.value });
    if (draft.value.trim()) q.set('message', draft.value.trim());
    history.replaceState(null, '', `#/inspect?${q}`);
    const m = new URLSearchParams();
    if (draft.value.trim()) m.set('message', draft.value.trim());
    await show(out, () => api.get(`/api/agents/${enc(agentSelect.value)}/inspect${m.size ? '?' + m : ''}`), catalog);
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  main.append(form, out);
  await run();
}

// show fills out with the inspection fetch() answers.
async function show(out, fetch, catalog) {
  replace(out, h('p', { class: 'muted' }, t('ins.assembling')));
  try {
    replace(out, ...inspection(await fetch(), catalog));
  } catch (err) {
    replace(out, errorBox(err, t('ins.failed')));
  }
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

// inspection lays out an inspection: the summary, the model calls, then
// the details.
function inspection(ins, catalog) {
  const sizes = ins.sizes ?? {};
  const tools = ins.tools ?? [];
  const excluded = ins.excluded ?? [];
  const intent = ins.intent ?? [];
  const warnings = ins.warnings ?? [];
  const known = new Map((catalog?.tools ?? []).map((tool) => [tool.name, tool.definition_chars]));
  const size = (tool) => known.get(tool.name) ?? chars(JSON.stringify(tool));
  // why: under Deliberate Tool Mode, the rule that declared each tool.
  const why = new Map((ins.declared ?? []).map((d) => [d.name, d.reason]));
  return [
    summary(ins, catalog, size),
    callsSection(ins),
    warnings.length
      ? section('ins-warnings', t('ins.warnings'), h('ul', { class: 'warnings' }, warnings.map((w) => h('li', null, w))))
      : null,
    ins.history ? historySection(ins.history) : null,
    section('ins-tools', t('ins.declared', { n: tools.length }),
      tools.length ? toolsTable(tools, size, why, ins.origins ?? []) : h('p', null, t('ins.noTools'))),
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

// turnLabel says which turn this is; a draft has no turn id.
function turnLabel(ins) {
  if (!ins.turn_id) return t('ins.draftTurn');
  const steps = ins.steps ?? 0;
  return steps ? `${ins.turn_id} · ${tn('ins.stepCount', steps)}` : ins.turn_id;
}

// summary is what people come for: the facts, the sizes against the
// ceilings, the declared tools with their sizes, the tools left out with
// their reasons, and Deliberate Tool Mode's matches.
function summary(ins, catalog, size) {
  const sizes = ins.sizes ?? {};
  const tools = ins.tools ?? [];
  const excluded = ins.excluded ?? [];
  const intent = ins.intent ?? [];
  return section('ins-summary', t('ins.summary'),
    h('dl', { class: 'facts' },
      h('dt', null, t('ins.agent')), h('dd', null, ins.agent || '—'),
      h('dt', null, t('ins.model')), h('dd', null, ins.model || '—'),
      h('dt', null, t('ins.turn')), h('dd', { id: 'ins-turn' }, turnLabel(ins))),
    h('div', { class: 'gauges' },
      meter(t('ins.alwaysOn'), sizes.always_paid_chars ?? 0, catalog?.always_paid_ceiling ?? 0),
      meter(t('ins.allDeclared'), sizes.definitions_chars ?? 0, catalog?.widest_ceiling ?? 0),
      meter(t('ins.system'), sizes.system_chars ?? 0, 0),
      meter(t('ins.context'), sizes.context_chars ?? 0, 0)),
    h('div', { class: 'summary-grid' },
      h('div', { class: 'summary-part', id: 'sum-declared' },
        h('h3', null, t('ins.sumDeclared', { n: tools.length })),
        tools.length
          ? h('ul', { class: 'sum-list' }, tools.map((tool) => h('li', null, h('code', null, tool.name),
            h('span', { class: 'muted small' }, ' ', tn('ins.chars', size(tool))))))
          : h('p', { class: 'muted' }, t('ins.sumNoTools'))),
      h('div', { class: 'summary-part', id: 'sum-excluded' },
        h('h3', null, t('ins.leftOut', { n: excluded.length })),
        excluded.length
          ? h('ul', { class: 'sum-list' }, excluded.map((x) => h('li', null, h('code', null, x.name), ': ', x.reason)))
          : h('p', { class: 'muted' }, t('ins.sumNothing'))),
      h('div', { class: 'summary-part', id: 'sum-intent' },
        h('h3', null, t('ins.dtm')),
        intent.length
          ? h('ul', { class: 'sum-list' }, intent.map((m) => h('li', null, `${m.family}: `, h('q', null, m.trigger))))
          : h('p', { class: 'muted' }, t('ins.sumNoMatches')))));
}

// callsSection lists the turn's model calls, each a disclosure that lays
// out, when first opened, what it sent after the system prompt: its
// messages and the definitions. The first is open.
function callsSection(ins) {
  const calls = ins.calls ?? [];
  const msgs = ins.messages ?? [];
  if (!calls.length) {
    return section('ins-calls', t('ins.modelCalls'), h('p', { class: 'muted' }, t('ins.noCalls')));
  }
  return section('ins-calls', tn('ins.callsTitle', calls.length),
    h('p', { class: 'muted small' }, ins.turn_id ? t('ins.callsSent') : t('ins.callWouldBe'),
      ins.omitted ? ` ${tn('ins.omitted', ins.omitted)}` : ''),
    calls.map((c, i) => callDetails(ins, msgs, c, i)));
}

// callDetails is one model call.
function callDetails(ins, msgs, c, i) {
  const sent = c.kept.length + (c.cut?.marker ? 1 : 0) + (c.end - c.from);
  const cut = c.cut ?? {};
  const win = cut.window ?? {};
  const body = h('div', { class: 'call-body' });
  const details = h('details', { class: 'call', 'data-call': String(i + 1), open: i === 0 },
    h('summary', null, h('span', { class: 'call-title' }, t('ins.call', { n: i + 1 })),
      h('span', { class: 'muted small' }, ' ', tn('ins.callSize', sent, { tokens: number(cut.tokens ?? 0), window: number(win.tokens ?? 0) }),
        cut.dropped ? tn('ins.callDropped', cut.dropped) : '')),
    body);
  let drawn = false;
  const draw = () => {
    if (drawn || !details.open) return;
    drawn = true;
    const items = [];
    for (const k of c.kept) items.push(messageItem(msgs[k], k === ins.turn_start));
    if (cut.marker) items.push(h('li', { class: 'call-msg marker' }, h('span', { class: 'role' }, t('ins.marker')), h('div', { class: 'msg-text' }, cut.marker)));
    for (let k = c.from; k < c.end; k++) items.push(messageItem(msgs[k], k === ins.turn_start));
    const defs = h('pre', { tabindex: '0' });
    const defsBox = h('details', { class: 'call-defs' },
      h('summary', null, t('ins.definitions', { n: (ins.tools ?? []).length, size: tn('ins.chars', ins.sizes?.definitions_chars ?? 0) })), defs);
    defsBox.addEventListener('toggle', () => { if (defsBox.open && !defs.textContent) defs.textContent = pretty(ins.tools ?? []); });
    replace(body, defsBox, h('ol', { class: 'call-messages' }, items));
  };
  details.addEventListener('toggle', draw);
  draw();
  return details;
}

// messageItem is one message of a call: its role, its text, its tool
// calls with their arguments and its tool results. isContext marks the
// turn's context message.
function messageItem(m, isContext) {
  if (!m) return null;
  const role = m.role === 'tool' ? t('ins.roleTool') : m.role === 'assistant' ? t('ins.roleAssistant') : isContext ? t('ins.context') : t('ins.roleUser');
  return h('li', { class: `call-msg ${m.role}${isContext ? ' context' : ''}` },
    h('span', { class: 'role' }, role, m.images ? ` ${tn('ins.images', m.images)}` : ''),
    m.text ? h('div', { class: 'msg-text' }, m.text) : null,
    (m.tool_calls ?? []).map((c) => h('div', { class: 'msg-call' },
      h('span', { class: 'small' }, tx('ins.callsTool', { name: h('code', null, c.name) }), h('span', { class: 'muted' }, ` (${c.id})`)),
      h('pre', { tabindex: '0' }, pretty(c.arguments)))),
    (m.results ?? []).map((r) => h('div', { class: r.is_error ? 'msg-result error' : 'msg-result' },
      h('span', { class: 'small' }, r.is_error ? tx('ins.errorFrom', { name: h('code', null, r.name) }) : tx('ins.resultOf', { name: h('code', null, r.name) }),
        h('span', { class: 'muted' }, ` (${r.call_id})`)),
      h('pre', { tabindex: '0' }, r.content))));
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
function toolsTable(tools, size, why, origins) {
  const from = new Map(origins.map((o) => [o.name, o]));
  return table('tools-table', [t('ins.colTool'), [t('ins.colSize')], t('ins.colDescription')], tools, (tool) => [
    h('th', { scope: 'row' }, h('code', null, tool.name),
      why.has(tool.name) ? h('div', { class: 'why muted small' }, why.get(tool.name)) : null,
      from.has(tool.name) ? h('div', { class: 'origin muted small' },
        tx('ins.origin', { server: h('code', null, from.get(tool.name).server), tool: h('code', null, from.get(tool.name).tool) })) : null),
    h('td', { class: 'num' }, number(size(tool))),
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
