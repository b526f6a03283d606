// Tools: the tool console (run one of an agent's tools by hand, no model
// involved) and the catalog with each definition's size and the ceilings.
// #/tools?agent=NAME&tool=TOOL opens the console on that agent and tool.
import { h, heading, errorBox, number, meter, pretty, replace, append } from './dom.js';
import { t, tn, tx } from './i18n.js';

const enc = encodeURIComponent;

export async function render({ api, main, query }) {
  const [cat, agents] = await Promise.all([api.get('/api/tools'), agentNames(api)]);
  const tools = cat?.tools ?? [];
  const con = toolConsole(api, agents, query);
  const cols = [t('ins.colTool'), t('tools.colFamily'), t('tools.colAccess'), t('tools.colAlwaysOn'), t('ins.colSize'), t('ins.colDescription')];
  main.append(heading(t('tools.title')),
    h('p', { class: 'lede' }, t('tools.lede')),
    con.el,
    h('section', { class: 'catalog-section', 'aria-labelledby': 'catalog-h' },
      h('h2', { id: 'catalog-h' }, t('tools.catalog')),
      h('p', { class: 'muted' }, t('tools.catalogHelp')),
      h('div', { class: 'gauges' },
        meter(t('tools.alwaysOn'), cat.always_paid_chars, cat.always_paid_ceiling),
        meter(t('tools.widest'), cat.widest_chars, cat.widest_ceiling)),
      h('div', { class: 'table-wrap' }, h('table', { class: 'stack catalog' },
        h('caption', null, tn('tools.count', tools.length)),
        h('thead', null, h('tr', null, cols.map((c, i) => h('th', { scope: 'col', class: i === 4 ? 'num' : null }, c)))),
        h('tbody', null, tools.map((tool) => h('tr', { class: tool.always_on ? 'always' : null },
          h('th', { scope: 'row', 'data-label': cols[0] }, h('code', null, tool.name)),
          h('td', { 'data-label': cols[1] }, tool.family),
          h('td', { 'data-label': cols[2] }, tool.access),
          h('td', { 'data-label': cols[3] }, tool.always_on ? t('tools.yes') : t('tools.no')),
          h('td', { 'data-label': cols[4], class: 'num' }, number(tool.definition_chars)),
          h('td', { 'data-label': cols[5], class: 'desc' }, tool.description))))))));
  await con.ready;
  // A link that names an agent comes to the console.
  return query.has('agent') ? con.el.querySelector('h2') : undefined;
}

async function agentNames(api) {
  const res = await api.get('/api/agents');
  return (res?.agents ?? []).map((a) => a.name).sort();
}

// toolConsole lists an agent's console tools; picking one fills the
// arguments with a skeleton of its input schema, and Run shows the result.
// ready settles once the first agent's tools are listed.
function toolConsole(api, agents, query) {
  const section = (...body) => h('section', { class: 'panel console', id: 'console', 'aria-labelledby': 'console-h' },
    h('h2', { id: 'console-h', tabindex: '-1' }, t('tools.console')),
    h('p', { class: 'muted' }, t('tools.consoleHelp')),
    body);
  if (!agents.length) {
    return { el: section(h('p', null, tx('tools.noAgents', { create: h('a', { href: '#/agents/new' }, t('tools.createOne')) }))), ready: Promise.resolve() };
  }
  const want = query.get('agent');
  const agentSel = h('select', { id: 'console-agent', name: 'agent' },
    agents.map((n) => h('option', { value: n, selected: n === want }, n)));
  const toolSel = h('select', { id: 'console-tool', name: 'tool', disabled: true });
  const about = h('div', { class: 'console-about', id: 'console-about' });
  const args = h('textarea', { id: 'console-args', name: 'arguments', class: 'code', rows: 8, spellcheck: 'false',
    autocapitalize: 'off', autocomplete: 'off', 'aria-describedby': 'console-args-help' });
  const run = h('button', { type: 'submit', class: 'primary', id: 'console-run', disabled: true }, t('tools.run'));
  const out = h('div', { class: 'console-out', id: 'console-out', 'aria-live': 'polite' });
  let tools = [];
  let wantTool = query.get('tool');

  const remember = () => {
    const q = new URLSearchParams({ agent: agentSel.value });
    if (toolSel.value) q.set('tool', toolSel.value);
    history.replaceState(null, '', `#/tools?${q}`);
  };
  const pick = () => {
    const tool = tools.find((x) => x.name === toolSel.value);
    args.removeAttribute('aria-invalid');
    replace(out);
    if (!tool) {
      replace(about);
      args.value = '';
      run.disabled = true;
      return;
    }
    replace(about, ...toolAbout(tool));
    const sk = skeleton(tool.input_schema ?? {});
    args.value = JSON.stringify(sk && typeof sk === 'object' && !Array.isArray(sk) ? sk : {}, null, 2);
    run.disabled = false;
    remember();
  };
  const load = async () => {
    toolSel.disabled = true;
    run.disabled = true;
    replace(toolSel);
    replace(out);
    replace(about, h('p', { class: 'muted' }, t('tools.listing')));
    try {
      tools = (await api.get(`/api/console/tools?agent=${enc(agentSel.value)}`))?.tools ?? [];
    } catch (err) {
      tools = [];
      replace(about, errorBox(err, t('tools.listFailed')));
      args.value = '';
      return;
    }
    if (!tools.length) {
      replace(about, h('p', null, t('tools.noTools')));
      args.value = '';
      remember();
      return;
    }
    append(toolSel, tools.map((tool) => h('option', { value: tool.name, selected: tool.name === wantTool }, tool.name)));
    wantTool = null;
    toolSel.disabled = false;
    pick();
  };
  agentSel.addEventListener('change', load);
  toolSel.addEventListener('change', pick);

  const form = h('form', { class: 'console-form', id: 'console-form' },
    h('div', { class: 'console-pick' },
      h('div', { class: 'field' }, h('label', { for: 'console-agent' }, t('chat.agent')), agentSel),
      h('div', { class: 'field' }, h('label', { for: 'console-tool' }, t('ins.colTool')), toolSel)),
    about,
    h('label', { for: 'console-args' }, t('tools.arguments')),
    h('p', { class: 'muted small', id: 'console-args-help' }, t('tools.argumentsHelp')),
    args,
    h('div', { class: 'row' }, run),
    out);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let parsed;
    let problem = '';
    try {
      parsed = JSON.parse(args.value);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) problem = t('tools.notObject');
    } catch (err) {
      problem = t('tools.notJSON', { error: err.message });
    }
    if (problem) {
      args.setAttribute('aria-invalid', 'true');
      replace(out, errorBox(problem, t('tool.refusal')));
      args.focus();
      return;
    }
    args.removeAttribute('aria-invalid');
    run.disabled = true;
    replace(out, h('p', { class: 'muted' }, t('chat.runningTool', { tool: toolSel.value })));
    try {
      const r = await api.post('/api/console/run', { agent: agentSel.value, tool: toolSel.value, arguments: parsed });
      replace(out, ...runResult(r));
    } catch (err) {
      replace(out, errorBox(err, t('tool.refusal')));
    } finally {
      run.disabled = false;
    }
  });
  return { el: section(form), ready: load() };
}

// toolAbout describes the picked tool: family, access, description and
// its parameters.
function toolAbout(tool) {
  const props = tool.input_schema?.properties ?? {};
  const required = new Set(tool.input_schema?.required ?? []);
  const optional = Object.keys(props).filter((p) => !required.has(p));
  return [
    h('p', { class: 'tool-meta' },
      h('span', { class: 'badge' }, tool.family || t('tools.noFamily')), ' ',
      h('span', { class: tool.access === 'write' ? 'badge warn' : 'badge' }, tool.access || 'read')),
    tool.access === 'write' ? h('p', { class: 'notice small' }, t('tools.writes')) : null,
    h('p', { class: 'desc' }, tool.description),
    optional.length ? h('p', { class: 'muted small' }, t('tools.optional'), ' ',
      optional.map((p, i) => [i ? ', ' : '', h('code', null, p)])) : null,
    h('details', null, h('summary', null, t('tools.schema')), h('pre', { tabindex: '0' }, pretty(tool.input_schema ?? {}))),
  ];
}

function runResult(r) {
  return [
    h('div', { class: 'console-head' },
      h('span', { class: r.is_error ? 'badge err' : 'badge on', id: 'console-status' }, r.is_error ? t('tool.failed') : t('tool.done')),
      h('span', { class: 'muted', id: 'console-duration' }, t('tools.took', { tool: r.tool ?? '', ms: number(r.duration_ms) }))),
    h('p', { class: 'label' }, r.is_error ? t('tool.error') : t('tool.result')),
    h('pre', { class: r.is_error ? 'console-result error' : 'console-result', id: 'console-result', tabindex: '0' }, pretty(r.result ?? '')),
  ];
}

// skeleton is a placeholder value for a JSON Schema: an object's required
// properties, each with a value of its type (its const, default or first
// enum value when it has one).
// A schema that says nothing of its type gives "".
export function skeleton(schema, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 8) return '';
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const alt = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alt) && alt.length) return skeleton(alt.find((s) => s?.type !== 'null') ?? alt[0], depth + 1);
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((x) => x !== 'null') ?? type[0];
  if (!type && schema.properties) type = 'object';
  switch (type) {
    case 'object': {
      const out = {};
      for (const name of schema.required ?? []) out[name] = skeleton(schema.properties?.[name], depth + 1);
      return out;
    }
    case 'array': return [];
    case 'string': return '';
    case 'integer':
    case 'number': return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean': return false;
    case 'null': return null;
  }
  return '';
}
