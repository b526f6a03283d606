// Tools: the catalog with each definition's size and the ceilings.
import { h, heading, number, meter } from './dom.js';

export async function render({ api, main }) {
  const cat = await api.get('/api/tools');
  const tools = cat?.tools ?? [];
  main.append(heading('Tools'),
    h('p', { class: 'lede' }, 'Every tool Quiver can declare, with the size of its definition. ',
      'Always-on tools are paid in every turn; the ceilings keep the declarations small.'),
    h('div', { class: 'gauges' },
      meter('Always-on definitions', cat.always_paid_chars, cat.always_paid_ceiling),
      meter('Widest turn (every tool declared)', cat.widest_chars, cat.widest_ceiling)),
    h('div', { class: 'table-wrap' }, h('table', { class: 'stack catalog' },
      h('caption', null, `${tools.length} tools`),
      h('thead', null, h('tr', null, ['Tool', 'Family', 'Access', 'Always on', 'Size', 'Description']
        .map((c) => h('th', { scope: 'col', class: c === 'Size' ? 'num' : null }, c)))),
      h('tbody', null, tools.map((t) => h('tr', { class: t.always_on ? 'always' : null },
        h('th', { scope: 'row', 'data-label': 'Tool' }, h('code', null, t.name)),
        h('td', { 'data-label': 'Family' }, t.family),
        h('td', { 'data-label': 'Access' }, t.access),
        h('td', { 'data-label': 'Always on' }, t.always_on ? 'yes' : 'no'),
        h('td', { 'data-label': 'Size', class: 'num' }, number(t.definition_chars)),
        h('td', { 'data-label': 'Description', class: 'desc' }, t.description)))))));
}
