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

const enc = encodeURIComponent;

const LEDE = ['What the model sees in a turn: the system prompt, the context message, the declared tools and each model call — ',
  'and which tools were left out, and why. Nothing runs and nothing is saved.'];

export async function render({ api, main, args, query }) {
  main.append(heading('Inspector'), h('p', { class: 'lede' }, LEDE));
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
  main.append(h('h2', null, 'Pick a conversation'),
    list.length
      ? h('ul', { class: 'conv-list' }, list.map((c) => h('li', null,
        h('a', { href: `#/inspect/${enc(c.id)}` }, h('span', { class: 'conv-title' }, c.title || `Chat with ${c.agent}`),
          h('span', { class: 'conv-meta' }, `${c.agent} · ${when(c.updated_at)}`)))))
      : h('p', null, 'No conversations yet. ', h('a', { href: '#/chat' }, 'Start one'), ', then inspect it here.'));
  if (agents.length) {
    main.append(h('h2', null, 'Or an agent, with a draft message'),
      h('p', { class: 'muted' }, 'What a first message to the agent would send, without starting a conversation.'),
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
    h('option', { value: '' }, 'A new turn with the draft message'),
    pastTurns(msgs?.messages ?? []).map((t) => h('option', { value: t.id, selected: t.id === query.get('turn') }, t.label)));
  const out = h('div', { class: 'inspection', 'aria-live': 'polite' });
  const form = h('form', { class: 'inspect-form' },
    h('label', { for: 'draft' }, 'Draft message'), draft,
    h('label', { for: 'turn' }, 'Turn'), turnSelect,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Inspect'),
      h('a', { href: `#/chat/${enc(id)}` }, 'Back to the conversation')));
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
    h('label', { for: 'inspect-agent' }, 'Agent'), agentSelect,
    h('label', { for: 'draft' }, 'Draft message'), draft,
    h('p', { class: 'muted small', id: 'draft-help' }, 'As the first message of a new conversation: nothing is sent, ',
      'no conversation is started.'),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Inspect'),
      h('a', { href: `#/agents/${enc(agentSelect.value)}` }, 'The agent')));
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
  replace(out, h('p', { class: 'muted' }, 'Assembling…'));
  try {
    replace(out, ...inspection(await fetch(), catalog));
  } catch (err) {
    replace(out, errorBox(err, 'Could not inspect'));
  }
}

// pastTurns lists the transcript's turns, each named by its first message.
function pastTurns(messages) {
  const turns = new Map();
  for (const m of messages) {
    if (m.role !== 'user' || !m.turn_id || turns.has(m.turn_id)) continue;
    const text = m.content.length > 60 ? m.content.slice(0, 57) + '…' : m.content;
    turns.set(m.turn_id, { id: m.turn_id, label: `Turn: “${text}” (${when(m.created_at)})` });
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
  const known = new Map((catalog?.tools ?? []).map((t) => [t.name, t.definition_chars]));
  const size = (t) => known.get(t.name) ?? chars(JSON.stringify(t));
  // why: under Deliberate Tool Mode, the rule that declared each tool.
  const why = new Map((ins.declared ?? []).map((d) => [d.name, d.reason]));
  return [
    summary(ins, catalog, size),
    callsSection(ins),
    warnings.length
      ? section('ins-warnings', 'Warnings', h('ul', { class: 'warnings' }, warnings.map((w) => h('li', null, w))))
      : null,
    ins.history ? historySection(ins.history) : null,
    section('ins-tools', `Declared tools (${tools.length})`,
      tools.length ? toolsTable(tools, size, why, ins.origins ?? []) : h('p', null, 'No tools are declared in this turn.')),
    section('ins-excluded', `Left out (${excluded.length})`,
      excluded.length ? excludedTable(excluded) : h('p', null, 'Nothing was left out.')),
    section('ins-intent', 'Deliberate Tool Mode',
      intent.length ? intentTable(intent)
        : h('p', null, 'No matches: the mode is off for this agent, or the message asked for no optional tool family.')),
    section('ins-system', `System prompt (${number(sizes.system_chars ?? chars(ins.system))} characters)`,
      h('pre', { class: 'prompt', tabindex: '0' }, ins.system ?? '')),
    section('ins-context', `Context message (${number(sizes.context_chars ?? chars(ins.context))} characters)`,
      h('pre', { class: 'prompt', tabindex: '0' }, ins.context ?? '')),
  ];
}

// turnLabel says which turn this is; a draft has no turn id.
function turnLabel(ins) {
  if (!ins.turn_id) return 'A draft: not run, so it has no turn id yet';
  const steps = ins.steps ?? 0;
  return steps ? `${ins.turn_id} · ${steps === 1 ? '1 model call' : `${steps} model calls`}` : ins.turn_id;
}

// summary is what people come for: the facts, the sizes against the
// ceilings, the declared tools with their sizes, the tools left out with
// their reasons, and Deliberate Tool Mode's matches.
function summary(ins, catalog, size) {
  const sizes = ins.sizes ?? {};
  const tools = ins.tools ?? [];
  const excluded = ins.excluded ?? [];
  const intent = ins.intent ?? [];
  return section('ins-summary', 'Summary',
    h('dl', { class: 'facts' },
      h('dt', null, 'Agent'), h('dd', null, ins.agent || '—'),
      h('dt', null, 'Model'), h('dd', null, ins.model || '—'),
      h('dt', null, 'Turn'), h('dd', { id: 'ins-turn' }, turnLabel(ins))),
    h('div', { class: 'gauges' },
      meter('Always-on tool definitions', sizes.always_paid_chars ?? 0, catalog?.always_paid_ceiling ?? 0),
      meter('All declared definitions', sizes.definitions_chars ?? 0, catalog?.widest_ceiling ?? 0),
      meter('System prompt', sizes.system_chars ?? 0, 0),
      meter('Context message', sizes.context_chars ?? 0, 0)),
    h('div', { class: 'summary-grid' },
      h('div', { class: 'summary-part', id: 'sum-declared' },
        h('h3', null, `Declared (${tools.length})`),
        tools.length
          ? h('ul', { class: 'sum-list' }, tools.map((t) => h('li', null, h('code', null, t.name),
            h('span', { class: 'muted small' }, ` ${number(size(t))} characters`))))
          : h('p', { class: 'muted' }, 'No tools.')),
      h('div', { class: 'summary-part', id: 'sum-excluded' },
        h('h3', null, `Left out (${excluded.length})`),
        excluded.length
          ? h('ul', { class: 'sum-list' }, excluded.map((x) => h('li', null, h('code', null, x.name), ': ', x.reason)))
          : h('p', { class: 'muted' }, 'Nothing.')),
      h('div', { class: 'summary-part', id: 'sum-intent' },
        h('h3', null, 'Deliberate Tool Mode'),
        intent.length
          ? h('ul', { class: 'sum-list' }, intent.map((m) => h('li', null, `${m.family}: `, h('q', null, m.trigger))))
          : h('p', { class: 'muted' }, 'No matches (off, or the message asked for no optional family).'))));
}

// callsSection lists the turn's model calls, each a disclosure that lays
// out, when first opened, what it sent after the system prompt: its
// messages and the definitions. The first is open.
function callsSection(ins) {
  const calls = ins.calls ?? [];
  const msgs = ins.messages ?? [];
  if (!calls.length) {
    return section('ins-calls', 'Model calls', h('p', { class: 'muted' }, 'This server shows no model calls for this turn.'));
  }
  return section('ins-calls', calls.length === 1 ? 'Model call' : `Model calls (${calls.length})`,
    h('p', { class: 'muted small' }, ins.turn_id
      ? 'Each call as it was sent: the system prompt (below), the tool definitions, then these messages.'
      : 'The first call as it would be sent: the system prompt (below), the tool definitions, then these messages.',
    ins.omitted ? ` The ${number(ins.omitted)} earliest messages of the conversation were sent with none of them (each call left them out behind its marker).` : ''),
    calls.map((c, i) => callDetails(ins, msgs, c, i)));
}

// callDetails is one model call.
function callDetails(ins, msgs, c, i) {
  const sent = c.kept.length + (c.cut?.marker ? 1 : 0) + (c.end - c.from);
  const cut = c.cut ?? {};
  const win = cut.window ?? {};
  const body = h('div', { class: 'call-body' });
  const details = h('details', { class: 'call', 'data-call': String(i + 1), open: i === 0 },
    h('summary', null, h('span', { class: 'call-title' }, `Call ${i + 1}`),
      h('span', { class: 'muted small' }, ` ${sent === 1 ? '1 message' : `${number(sent)} messages`}, about ${number(cut.tokens ?? 0)} of ${number(win.tokens ?? 0)} tokens`,
        cut.dropped ? `, ${number(cut.dropped)} earlier messages left out` : '')),
    body);
  let drawn = false;
  const draw = () => {
    if (drawn || !details.open) return;
    drawn = true;
    const items = [];
    for (const k of c.kept) items.push(messageItem(msgs[k], k === ins.turn_start));
    if (cut.marker) items.push(h('li', { class: 'call-msg marker' }, h('span', { class: 'role' }, 'Marker'), h('div', { class: 'msg-text' }, cut.marker)));
    for (let k = c.from; k < c.end; k++) items.push(messageItem(msgs[k], k === ins.turn_start));
    const defs = h('pre', { tabindex: '0' });
    const defsBox = h('details', { class: 'call-defs' },
      h('summary', null, `Tool definitions (${(ins.tools ?? []).length}, ${number(ins.sizes?.definitions_chars ?? 0)} characters)`), defs);
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
  const role = m.role === 'tool' ? 'Tool results' : m.role === 'assistant' ? 'Assistant' : isContext ? 'Context message' : 'User';
  return h('li', { class: `call-msg ${m.role}${isContext ? ' context' : ''}` },
    h('span', { class: 'role' }, role, m.images ? ` (and ${m.images} image${m.images === 1 ? '' : 's'})` : ''),
    m.text ? h('div', { class: 'msg-text' }, m.text) : null,
    (m.tool_calls ?? []).map((t) => h('div', { class: 'msg-call' },
      h('span', { class: 'small' }, 'Calls ', h('code', null, t.name), h('span', { class: 'muted' }, ` (${t.id})`)),
      h('pre', { tabindex: '0' }, pretty(t.arguments)))),
    (m.results ?? []).map((r) => h('div', { class: r.is_error ? 'msg-result error' : 'msg-result' },
      h('span', { class: 'small' }, r.is_error ? 'Error from ' : 'Result of ', h('code', null, r.name),
        h('span', { class: 'muted' }, ` (${r.call_id})`)),
      h('pre', { tabindex: '0' }, r.content))));
}

// historySection says how the turn's first model call fits the model's
// context window, and shows the marker the model sees when earlier
// messages are left out.
function historySection(hist) {
  const win = hist.window ?? {};
  const size = `about ${number(hist.tokens ?? 0)} of ${number(win.tokens ?? 0)} tokens, ${number(win.reserve ?? 0)} kept for the reply`;
  return section('ins-history', 'History',
    h('p', null, hist.dropped
      ? `${number(hist.dropped)} earlier messages are left out of the first call to fit the model's context window (${size}); the model sees instead:`
      : `The whole history is sent with the first call (${size}).`),
    hist.marker ? h('pre', { class: 'prompt', tabindex: '0' }, hist.marker) : null);
}

// table is a table with a header row and one row per item; cells(item)
// returns the row's cells, the first of which heads the row.
function table(cls, headers, items, cells) {
  return h('div', { class: 'table-wrap' }, h('table', { class: cls },
    h('thead', null, h('tr', null, headers.map((t) => h('th', { scope: 'col', class: t === 'Size' ? 'num' : null }, t)))),
    h('tbody', null, items.map((it) => h('tr', null, cells(it))))));
}

// toolsTable lists the declared tools; why maps a tool to the rule that
// declared it under Deliberate Tool Mode, and a tool of an MCP server says
// which server and which of its tools the name the model calls maps to;
// both are shown beneath its name.
function toolsTable(tools, size, why, origins) {
  const from = new Map(origins.map((o) => [o.name, o]));
  return table('tools-table', ['Tool', 'Size', 'Description'], tools, (t) => [
    h('th', { scope: 'row' }, h('code', null, t.name),
      why.has(t.name) ? h('div', { class: 'why muted small' }, why.get(t.name)) : null,
      from.has(t.name) ? h('div', { class: 'origin muted small' },
        'MCP server ', h('code', null, from.get(t.name).server), ', tool ', h('code', null, from.get(t.name).tool)) : null),
    h('td', { class: 'num' }, number(size(t))),
    h('td', null, h('div', { class: 'desc' }, t.description),
      h('details', null, h('summary', null, 'Parameters'), h('pre', { tabindex: '0' }, pretty(t.parameters)))),
  ]);
}

function excludedTable(excluded) {
  return table('excluded', ['Tool', 'Reason'], excluded, (x) => [
    h('th', { scope: 'row' }, h('code', null, x.name)),
    h('td', null, x.reason),
  ]);
}

function intentTable(intent) {
  return table('intent', ['Family', 'Trigger', 'Source'], intent, (m) => [
    h('td', null, m.family),
    h('td', null, h('q', null, m.trigger)),
    h('td', null, m.source),
  ]);
}
