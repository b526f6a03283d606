// Agents: the organisation's agents, and an editor for one agent's YAML
// (admins save and delete; members read) with the agent's knowledge
// below it (knowledge.js), then its skills (skills.js).
import { h, heading, errorBox, when, confirm, replace } from './dom.js';
import { t, tx } from './i18n.js';
import { knowledgeSection } from './knowledge.js';
import { skillsSection } from './skills.js';

const enc = encodeURIComponent;

const TEMPLATE = `# An agent: see examples/agents/assistant.yaml for every field.
name: helper
model: openai:gpt-4.1-mini
prompt: |
  You are a helpful assistant. Answer briefly and plainly.
# tools: the allowlist of optional tools or families; none when empty.
tools: []
`;

export async function render(ctx) {
  if (ctx.args[0]) {
    await editor(ctx, ctx.args[0] === 'new' ? null : ctx.args[0]);
    return;
  }
  const { api, me, main } = ctx;
  const list = (await api.get('/api/agents'))?.agents ?? [];
  main.append(heading(t('agents.title')),
    h('p', { class: 'lede' }, t('agents.lede')),
    me.role === 'admin' ? h('p', null, h('a', { class: 'button primary', href: '#/agents/new' }, t('agents.new'))) : null,
    list.length
      ? h('ul', { class: 'agent-list' }, list.map((a) => h('li', { 'data-agent': a.name },
        h('a', { href: `#/agents/${enc(a.name)}` }, h('code', null, a.name)),
        h('span', { class: 'muted' }, ' ', t('agents.updated', { when: when(a.updated_at) })),
        ' · ', h('a', { class: 'inspect-agent', href: `#/inspect?agent=${enc(a.name)}`, 'aria-label': t('agents.inspectNamed', { name: a.name }) },
          t('agents.inspect')))))
      : h('p', null, t('agents.none')));
}

// yamlName finds the definition's top-level name: line.
function yamlName(text) {
  const m = /^name:[ \t]*["']?([^\s"'#]+)["']?[ \t]*(#.*)?$/m.exec(text);
  return m ? m[1] : '';
}

// allowlistItem shows one allowlist warning with its suggestion, if any.
function allowlistItem(w) {
  return h('li', { 'data-entry': w.entry, 'data-field': w.field || 'tools' }, `${w.field || 'tools'}: `, w.message,
    w.suggestion ? h('span', null, tx('agents.didYouMean', { suggestion: h('code', null, w.suggestion) })) : null);
}

async function editor({ api, me, main }, name) {
  const admin = me.role === 'admin';
  let current = name;
  const agent = name ? await api.get(`/api/agents/${enc(name)}`) : { definition: TEMPLATE };
  const title = heading(name ? t('agents.heading', { name }) : t('agents.new'));
  const text = h('textarea', {
    id: 'definition', name: 'definition', rows: 22, class: 'code', spellcheck: 'false',
    autocapitalize: 'off', autocomplete: 'off', value: agent.definition ?? '', readonly: !admin,
    'aria-describedby': 'definition-help',
  });
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const del = h('button', { type: 'button', class: 'danger', id: 'delete-agent', hidden: !admin || !name }, t('agents.delete'));
  const form = h('form', { class: 'agent-form' },
    h('label', { for: 'definition' }, t('agents.definition')),
    h('p', { id: 'definition-help', class: 'muted' },
      admin ? t('agents.helpAdmin') : t('agents.helpMember')),
    text,
    h('div', { class: 'row' },
      admin ? h('button', { type: 'submit', class: 'primary' }, t('common.save')) : null,
      del, name ? h('a', { href: `#/inspect?agent=${enc(name)}`, id: 'inspect-this-agent' }, t('agents.inspect')) : null,
      h('a', { href: '#/agents' }, t('agents.all'))),
    status);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status);
    const target = yamlName(text.value);
    if (!target) {
      status.append(errorBox(t('agents.needsName'), t('common.notSaved')));
      return;
    }
    try {
      const saved = await api.put(`/api/agents/${enc(target)}`, { definition: text.value });
      const renamed = current && current !== target;
      current = target;
      title.textContent = t('agents.heading', { name: target });
      history.replaceState(null, '', `#/agents/${enc(target)}`);
      del.hidden = false;
      const warnings = saved?.warnings ?? [];
      const allowlist = saved?.allowlist_warnings ?? [];
      status.append(h('p', { class: 'ok' }, renamed
        ? t('agents.savedAs', { target, name })
        : t('agents.saved', { target })));
      if (warnings.length) {
        status.append(h('div', { class: 'warnings-box', role: 'status' },
          h('p', { class: 'label' }, t('agents.templateWarnings', { n: warnings.length })),
          h('ul', { class: 'warnings' }, warnings.map((w) => h('li', null, w)))));
      }
      if (allowlist.length) {
        status.append(h('div', { class: 'warnings-box allowlist-warnings', role: 'status' },
          h('p', { class: 'label' }, t('agents.allowlistWarnings', { n: allowlist.length })),
          h('ul', { class: 'warnings' }, allowlist.map(allowlistItem))));
      }
    } catch (err) {
      status.append(errorBox(err, t('common.notSaved')));
    }
  });
  del.addEventListener('click', async () => {
    if (!current || !(await confirm(t('agents.deleteQuestion', { name: current }), t('agents.delete')))) {
      del.focus();
      return;
    }
    try {
      await api.del(`/api/agents/${enc(current)}`);
      location.hash = '#/agents';
    } catch (err) {
      replace(status, errorBox(err, t('common.notDeleted')));
    }
  });
  main.append(title, form);
  if (name) main.append(knowledgeSection(api, admin, name), skillsSection(api, admin, name));
}
