// Inspector: the request a turn sends the model, laid out — what the model
// saw, what was left out and why, and the sizes against the ceilings.
import { h, heading, errorBox, chars, number, meter, pretty, when, replace } from './dom.js';

const enc = encodeURIComponent;

export async function render({ api, main, args, query }) {
  main.append(heading('Inspector'),
    h('p', { class: 'lede' }, 'What the model sees in a turn: the system prompt, the context message and the declared tools — ',
      'and which tools were left out, and why. Nothing runs and nothing is saved.'));
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
    replace(out, h('p', { class: 'muted' }, 'Assembling…'));
    try {
      const ins = await api.get(`/api/conversations/${enc(id)}/inspect${q.size ? '?' + q : ''}`);
      replace(out, ...inspection(ins, catalog));
    } catch (err) {
      replace(out, errorBox(err, 'Could not inspect'));
    }
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  turnSelect.addEventListener('change', () => { draft.disabled = Boolean(turnSelect.value); });
  main.append(form, out);
  await run();
}

async function pickConversation(api, main) {
  const list = (await api.get('/api/conversations'))?.conversations ?? [];
  main.append(h('h2', null, 'Pick a conversation'),
    list.length
      ? h('ul', { class: 'conv-list' }, list.map((c) => h('li', null,
        h('a', { href: `#/inspect/${enc(c.id)}` }, h('span', { class: 'conv-title' }, c.title || `Chat with ${c.agent}`),
          h('span', { class: 'conv-meta' }, `${c.agent} · ${when(c.updated_at)}`)))))
      : h('p', null, 'No conversations yet. ', h('a', { href: '#/chat' }, 'Start one'), ', then inspect it here.'));
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

// inspection lays out GET …/inspect's answer.
function inspection(ins, catalog) {
  const sizes = ins.sizes ?? {};
  const tools = ins.tools ?? [];
  const excluded = ins.excluded ?? [];
  const intent = ins.intent ?? [];
  const warnings = ins.warnings ?? [];
  const known = new Map((catalog?.tools ?? []).map((t) => [t.name, t.definition_chars]));
  // why: under Deliberate Tool Mode, the rule that declared each tool.
  const why = new Map((ins.declared ?? []).map((d) => [d.name, d.reason]));
  return [
    section('ins-summary', 'Request',
      h('dl', { class: 'facts' },
        h('dt', null, 'Agent'), h('dd', null, ins.agent || '—'),
        h('dt', null, 'Model'), h('dd', null, ins.model || '—'),
        h('dt', null, 'Turn'), h('dd', null, ins.turn_id || 'a new turn (not run)')),
      h('div', { class: 'gauges' },
        meter('Always-on tool definitions', sizes.always_paid_chars ?? 0, catalog?.always_paid_ceiling ?? 0),
        meter('All declared definitions', sizes.definitions_chars ?? 0, catalog?.widest_ceiling ?? 0),
        meter('System prompt', sizes.system_chars ?? 0, 0),
        meter('Context message', sizes.context_chars ?? 0, 0))),
    warnings.length
      ? section('ins-warnings', 'Warnings', h('ul', { class: 'warnings' }, warnings.map((w) => h('li', null, w))))
      : null,
    ins.history ? historySection(ins.history) : null,
    section('ins-tools', `Declared tools (${tools.length})`,
      tools.length ? toolsTable(tools, known, why, ins.origins ?? []) : h('p', null, 'No tools are declared in this turn.')),
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

// historySection says how the turn's first model call fits the model's
// context window, and shows the marker the model sees when earlier
// messages are left out.
function historySection(hist) {
  const win = hist.window ?? {};
  const size = `about ${number(hist.tokens ?? 0)} of ${number(win.tokens ?? 0)} tokens, ${number(win.reserve ?? 0)} kept for the reply`;
  return section('ins-history', 'History',
    h('p', null, hist.dropped
      ? `${number(hist.dropped)} earlier messages are left out to fit the model's context window (${size}); the model sees instead:`
      : `The whole history is sent (${size}).`),
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
function toolsTable(tools, known, why, origins) {
  const from = new Map(origins.map((o) => [o.name, o]));
  return table('tools-table', ['Tool', 'Size', 'Description'], tools, (t) => [
    h('th', { scope: 'row' }, h('code', null, t.name),
      why.has(t.name) ? h('div', { class: 'why muted small' }, why.get(t.name)) : null,
      from.has(t.name) ? h('div', { class: 'origin muted small' },
        'MCP server ', h('code', null, from.get(t.name).server), ', tool ', h('code', null, from.get(t.name).tool)) : null),
    h('td', { class: 'num' }, number(known.get(t.name) ?? chars(JSON.stringify(t)))),
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
