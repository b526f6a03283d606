// How a conversation looks: stored transcripts, and a turn streaming in.
import { h, replace } from './dom.js';
import { t, tn, tx, formatNumber } from './i18n.js';
import { markdownParts, patchBlocks } from './markdown.js';
import { messageItem, toolCard } from './messages.js';
import { addFiles } from './attachments.js';
import { artifactCard } from './artifacts.js';
import { showMarks, applyChanges } from './marks.js';

const enc = encodeURIComponent;

// STEP_STATES maps a checklist step's status to its class and the label
// screen readers hear.
const STEP_STATES = {
  pending: { cls: 'pending', label: () => t('checklist.pending') },
  in_progress: { cls: 'running', label: () => t('checklist.running') },
  completed: { cls: 'done', label: () => t('checklist.done') },
};

// checklistSteps renders a checklist's steps, each with its state.
function checklistSteps(items) {
  return items.map((it) => {
    const state = STEP_STATES[it.status] ?? STEP_STATES.pending;
    return h('li', { class: `step ${state.cls}` }, h('span', { class: 'sr-only' }, state.label() + ': '), it.text ?? '');
  });
}

// storedChecklist is the checklist an update_tasks call set, from its
// stored arguments (the call succeeded, so they passed the tool's
// checks), with whitespace collapsed as the tool collapses it; null when
// they cannot be read.
function storedChecklist(args) {
  try {
    const v = typeof args === 'string' ? JSON.parse(args) : args;
    if (!Array.isArray(v?.tasks)) return null;
    return v.tasks.map((it) => ({ text: String(it?.text ?? '').replace(/\s+/g, ' ').trim(), status: it?.status }));
  } catch {
    return null;
  }
}

// Turn renders one running turn's events into the transcript list. on
// receives what lives outside it, each optional: pause(p), actions(list),
// usage(text), working(state) with state "thinking", {tool: name} or
// null (the answer is streaming in, or the turn ended), and turnID(id)
// once the first event names the turn.
export class Turn {
  constructor(log, conversationID, on) {
    this.log = log;
    this.conv = conversationID;
    this.on = on ?? {};
    this.abort = new AbortController();
    this.bubble = null; // the Answer streaming in
    this.checklist = null; // the agent's checklist (update_tasks), once shown
    this.checklistItem = null; // the transcript item holding it
    this.cards = new Map(); // tool call id → { card, started }
    this.totals = { input: 0, cached: 0, output: 0, cost: 0, calls: 0 };
    this.ended = false;
    this.noModel = false;
    this.id = ''; // the turn's id, from its first event
    this.userItem = null;
    this.extra = []; // what the turn added to the log besides its message
    // cancelling is set when the user asked to cancel: the error that
    // ends the stream then reads as a cancellation.
    this.cancelling = false;
  }

  // user shows the message that starts the turn, with the files it goes
  // with.
  user(text, files = []) {
    this.said = text;
    this.userItem = messageItem('user', text);
    addFiles(this.userItem, this.conv, files);
    this.log.append(this.userItem);
  }

  // userText is the message that started the turn.
  userText() {
    return this.said ?? '';
  }

  // add appends an item of the turn to the log.
  add(el) {
    this.extra.push(el);
    this.log.append(el);
  }

  // retract takes the turn off the log: it never started (the server
  // refused the message, or it did not reach the server).
  retract() {
    this.endBubble();
    this.userItem?.remove();
    for (const el of this.extra) el.remove();
    this.extra = [];
    this.ended = true;
    this.on.working?.(null);
  }

  event(ev) {
    if (ev.turn_id && !this.id) this.named(ev.turn_id);
    switch (ev.type) {
      case 'text':
        this.on.working?.(null);
        this.text(ev.text ?? '');
        break;
      case 'tool_call': {
        this.endBubble();
        const c = toolCard(ev.call?.name, ev.call?.args, ev.call?.id);
        this.cards.set(ev.call?.id, { card: c, started: performance.now() });
        this.add(c.el);
        this.on.working?.({ tool: ev.call?.name ?? '?' });
        break;
      }
      case 'tool_result': {
        const r = ev.result ?? {};
        let c = this.cards.get(r.call_id);
        if (!c) {
          c = { card: toolCard(r.name, undefined, r.call_id) };
          this.cards.set(r.call_id, c);
          this.add(c.card.el);
        }
        c.card.result(r, c.started === undefined ? undefined : performance.now() - c.started);
        artifactCard(c.card.el, r.name ?? c.card.el.querySelector('.tool-name')?.textContent, r, true);
        const running = [...this.cards.values()].find((x) => x.card.el.classList.contains('running'));
        this.on.working?.(running ? { tool: running.card.el.querySelector('.tool-name').textContent } : 'thinking');
        break;
      }
      case 'pause':
        this.endBubble();
        if (ev.pause) this.on.pause?.(ev.pause);
        break;
      case 'next_actions':
        this.on.actions?.(ev.actions ?? []);
        break;
      case 'checklist':
        this.showChecklist(ev.checklist?.items ?? []);
        break;
      case 'messages':
        applyChanges(this.log, this.conv, ev.messages);
        this.on.messages?.(ev.messages ?? []);
        break;
      case 'usage':
        this.addUsage(ev);
        break;
      case 'done':
        this.finish(ev.stop);
        break;
      case 'error':
        this.fail(ev.error || t('turn.failed'));
        break;
    }
  }

  // showChecklist shows the agent's checklist as it now stands: added to
  // the log where it first appears (above the answer that follows), then
  // updated in place; an empty list takes it away.
  showChecklist(items) {
    if (!items.length) {
      this.checklistItem?.remove();
      this.checklist = this.checklistItem = null;
      return;
    }
    if (!this.checklist) {
      this.endBubble();
      this.checklist = h('ol', { class: 'turn-checklist', 'aria-label': t('chat.checklist') });
      this.checklistItem = h('li', { class: 'checklist-item' }, this.checklist);
      this.add(this.checklistItem);
    }
    replace(this.checklist, checklistSteps(items));
  }

  // named links the turn's message to its inspection once its id is known
  // (while the turn runs and after).
  named(id) {
    this.id = id;
    this.on.turnID?.(id);
    if (this.userItem) Object.assign(this.userItem.dataset, { turn: id, first: 'true', text: this.said ?? '' });
    const row = this.userItem?.querySelector('.msg-actions');
    if (row && this.conv) row.append(inspectLink(this.conv, id));
  }

  text(delta) {
    if (!this.bubble) {
      this.bubble = new Answer();
      if (this.id) this.bubble.el.dataset.turn = this.id;
      this.add(this.bubble.el);
    }
    this.bubble.add(delta);
  }

  endBubble() {
    this.bubble?.end();
    this.bubble = null;
  }

  addUsage(ev) {
    const u = ev.usage ?? {};
    const sum = this.totals;
    sum.input += u.input_tokens ?? 0;
    sum.cached += u.cached_input_tokens ?? 0;
    sum.output += u.output_tokens ?? 0;
    sum.cost += ev.cost_micros ?? 0;
    sum.calls++;
    const parts = [sum.cached ? t('usage.inputCached', { input: formatNumber(sum.input), cached: formatNumber(sum.cached) })
      : t('usage.input', { input: formatNumber(sum.input) }),
    t('usage.output', { output: formatNumber(sum.output) }), tn('usage.calls', sum.calls)];
    if (sum.cost) parts.push(`$${(sum.cost / 1e6).toFixed(4)}`);
    this.on.usage?.(t('usage.last', { parts: parts.join(' · ') }));
  }

  // finish ends the turn once: the streaming text is complete, calls that
  // never got a result say so, and a stop other than an answer or a
  // question is noted.
  finish(stop) {
    if (this.ended) return;
    this.ended = true;
    this.endBubble();
    this.on.working?.(null);
    for (const c of this.cards.values()) c.card.unanswered();
    const notes = {
      cancelled: () => t('turn.cancelled'),
      step_limit: () => t('turn.stepLimit'),
      budget: () => t('turn.budget'),
    };
    if (notes[stop]) this.add(h('li', { class: 'msg note' }, notes[stop]()));
  }

  fail(message) {
    if (this.ended) return;
    if (this.cancelling) {
      this.finish('cancelled');
      return;
    }
    this.finish();
    this.noModel = isNoModel(message);
    this.add(h('li', { class: 'msg error', role: 'alert' }, h('span', { class: 'who' }, t('turn.error')), h('div', { class: 'text' }, message)));
  }

  // lost says the page lost the turn's stream (the turn goes on on the
  // server) and offers retry, which reads it on; it returns the notice,
  // which the caller removes when retrying.
  lost(message, retry) {
    // The answer so far stays open: reading on continues it.
    this.on.working?.(null);
    const item = h('li', { class: 'msg error lost', role: 'alert' }, h('span', { class: 'who' }, t('turn.lostTitle')),
      h('div', { class: 'text' }, message),
      h('div', { class: 'msg-actions' }, h('button', { type: 'button', class: 'retry', onclick: () => retry(item) }, t('common.retry'))));
    this.add(item);
    return item;
  }
}

// inspectLink opens the inspector on one turn.
function inspectLink(conversationID, turnID) {
  return h('a', { class: 'inspect-link', href: `#/inspect/${enc(conversationID)}?turn=${enc(turnID)}` }, t('turn.inspect'));
}

// Answer is the agent's text streaming in. Each delta is added to the text
// so far. Rendering is incremental: the blocks that no later text can
// change (markdownParts' head) are rendered once and kept, and only the
// blocks after them (a fence or a bold marker split between deltas comes
// right once its end arrives) are rendered again, at most once per
// animation frame and, after a render that took d, no sooner than 8·d
// later, so that a long answer keeps the page responsive. A tail block
// that did not change keeps its node, and so does a code block that grew
// (patchBlocks), so a selection, focus or scroll inside it stays. end
// renders the final text at once: the same as markdown() of it.
class Answer {
  constructor() {
    this.src = '';
    this.kept = 0; // how much of src the kept blocks render
    this.tail = []; // the nodes after the kept blocks
    this.frame = 0;
    this.timer = 0;
    this.next = 0; // performance.now() before which no render starts
    this.el = messageItem('assistant', '', { source: () => this.src, collapse: false });
    this.el.setAttribute('aria-busy', 'true');
    this.body = this.el.querySelector('.text');
  }

  add(delta) {
    this.src += delta;
    this.schedule();
  }

  schedule() {
    if (this.frame || this.timer) return;
    const wait = this.next - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = 0;
        this.schedule();
      }, wait);
      return;
    }
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  end() {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timer);
    this.frame = this.timer = 0;
    this.render();
    this.el.removeAttribute('aria-busy');
  }

  // render renders the text after the kept blocks, keeps the blocks of it
  // that are now final, and patches the tail's nodes.
  render() {
    const start = performance.now();
    const { cut, head, tail } = markdownParts(this.src.slice(this.kept));
    this.kept += cut;
    this.tail = patchBlocks(this.body, this.tail, [...head, ...tail]).slice(head.length);
    const now = performance.now();
    this.next = now + 8 * (now - start);
  }
}

// isNoModel tells a failure caused by no connected model.
export function isNoModel(message) {
  return /no model|model is connected|connect a model/i.test(message ?? '');
}

// transcriptItems renders a stored transcript (GET …/messages) as list
// items. Context messages stay in the inspector; each turn's first user
// message links to its inspection. Messages of a turn carry its id
// (data-turn; the first user message data-first and its text, data-text)
// for the branch controls (branches.js). files, when set, maps a user
// message to the files it went with (Placement). (A stored call shows no
// duration: a step's call and result are stored at once.)
export function transcriptItems(messages, conversationID, files) {
  const items = [];
  const cards = new Map();
  const seenTurns = new Set();
  const calls = new Map(); // tool call id → its stored arguments
  const checklists = new Map(); // turn id → { item, list } of its checklist
  // checklist shows a turn's checklist as its last update_tasks call set
  // it, where the turn's first such call is, as it showed live; an empty
  // list takes it away.
  const checklist = (turnID, steps) => {
    let c = checklists.get(turnID);
    if (!steps.length) {
      if (c) c.item.hidden = true;
      checklists.delete(turnID);
      return;
    }
    if (!c) {
      const list = h('ol', { class: 'turn-checklist', 'aria-label': t('chat.checklist') });
      c = { list, item: h('li', { class: 'checklist-item' }, list) };
      checklists.set(turnID, c);
      items.push(c.item);
    }
    replace(c.list, checklistSteps(steps));
  };
  for (const m of messages) {
    switch (m.role) {
      case 'user': {
        const first = m.turn_id && !seenTurns.has(m.turn_id);
        if (m.turn_id) seenTurns.add(m.turn_id);
        const item = messageItem('user', m.content, { extra: first ? inspectLink(conversationID, m.turn_id) : null });
        if (m.turn_id) Object.assign(item.dataset, { turn: m.turn_id, first: String(first), text: m.content });
        showMarks(item, m);
        addFiles(item, conversationID, files?.get(m) ?? []);
        items.push(item);
        break;
      }
      case 'assistant':
        if (m.content || m.deleted) {
          const item = messageItem('assistant', m.content);
          if (m.turn_id) item.dataset.turn = m.turn_id;
          showMarks(item, m);
          items.push(item);
        }
        break;
      case 'tool_call': {
        const c = toolCard(m.tool_name, m.content, m.tool_call_id);
        cards.set(m.tool_call_id, c);
        calls.set(m.tool_call_id, m.content);
        items.push(c.el);
        break;
      }
      case 'tool': {
        let c = cards.get(m.tool_call_id);
        if (!c) {
          c = toolCard(m.tool_name, undefined, m.tool_call_id);
          items.push(c.el);
        }
        c.result({ content: m.content, is_error: m.is_error, ref: m.ref });
        artifactCard(c.el, m.tool_name, m, false);
        const steps = m.tool_name === 'update_tasks' && !m.is_error ? storedChecklist(calls.get(m.tool_call_id)) : null;
        if (steps) checklist(m.turn_id ?? '', steps);
        break;
      }
      case 'thought':
        items.push(h('li', { class: 'msg thought' },
          h('details', null, h('summary', null, t('msg.thought')), h('div', { class: 'text' }, m.content))));
        break;
    }
  }
  for (const c of cards.values()) c.unanswered();
  return items;
}

// pauseBlock shows a clarifying question in the transcript and returns
// the block that offers its suggested answer as a button.
export function pauseBlock(pause, log, answer) {
  log.append(h('li', { class: 'msg assistant question' }, h('span', { class: 'who' }, t('pause.question')), h('div', { class: 'text' }, pause.question)));
  return h('div', { class: 'pause', role: 'group', 'aria-labelledby': 'pause-h' },
    h('p', { id: 'pause-h', class: 'label' }, pause.suggested ? t('pause.suggested') : t('pause.asked')),
    pause.suggested
      ? h('button', { type: 'button', class: 'suggested', onclick: () => answer(pause.suggested) }, pause.suggested)
      : null,
    h('p', { class: 'muted' }, pause.suggested ? t('pause.orOwn') : t('pause.writeBelow')));
}

// noModelHelp says how to connect a model (docs/models.md, in short).
export function noModelHelp(conversationID, draft) {
  const q = new URLSearchParams();
  if (draft) q.set('message', draft);
  const code = (s) => h('code', null, s);
  const rows = [
    ['openai', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'],
    ['anthropic', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
    ['gemini', t('noModel.geminiKey'), 'GEMINI_BASE_URL'],
    ['ollama', '—', t('noModel.ollamaHost')],
    ['openrouter', 'OPENROUTER_API_KEY', 'https://openrouter.ai/api/v1'],
    [t('noModel.otherName'), t('noModel.fromConfig'), t('noModel.fromConfigServers')],
  ];
  const inspect = conversationID ? `#/inspect/${enc(conversationID)}${q.size ? '?' + q : ''}` : '#/inspect';
  return h('section', { class: 'notice no-model', 'aria-labelledby': 'no-model-h' },
    h('h2', { id: 'no-model-h' }, t('noModel.title')),
    h('p', null, tx('noModel.intro', { serve: code('quiver serve') })),
    h('ul', null,
      h('li', null, tx('noModel.keys', { openai: code('OPENAI_API_KEY'), anthropic: code('ANTHROPIC_API_KEY'),
        gemini: code('GEMINI_API_KEY'), model: code('model:'), form: code('provider:model'), example: code('openai:gpt-4.1-mini') })),
      h('li', null, tx('noModel.ollama', { host: code('localhost:11434'), pull: code('ollama pull qwen3:8b') })),
      h('li', null, tx('noModel.compatible', { config: code('--config') }))),
    h('div', { class: 'table-wrap' }, h('table', null,
      h('caption', null, t('noModel.caption')),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, t('noModel.provider')), h('th', { scope: 'col' }, t('noModel.key')),
        h('th', { scope: 'col' }, t('noModel.baseURL')))),
      h('tbody', null, rows.map((r) => h('tr', null, r.map((c) => h('td', null, c))))))),
    h('p', null, tx('noModel.inspector', { link: h('a', { href: inspect }, t('noModel.inspectorLink')) })));
}
