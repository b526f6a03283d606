// How a conversation looks: stored transcripts, and a turn streaming in.
import { h, pretty, number, replace } from './dom.js';
import { markdown, markdownParts, patchBlocks } from './markdown.js';

const enc = encodeURIComponent;

// Turn renders one running turn's events into the transcript list. on
// receives what lives outside it: pause(p), actions(list), usage(text).
export class Turn {
  constructor(log, conversationID, on) {
    this.log = log;
    this.conv = conversationID;
    this.on = on;
    this.abort = new AbortController();
    this.bubble = null; // the Answer streaming in
    this.cards = new Map(); // tool call id → card
    this.totals = { input: 0, cached: 0, output: 0, cost: 0, calls: 0 };
    this.ended = false;
    this.noModel = false;
    // cancelling is set when the user asked to cancel: the error that
    // ends the stream then reads as a cancellation.
    this.cancelling = false;
  }

  user(text) {
    this.log.append(messageItem('user', text));
  }

  event(ev) {
    switch (ev.type) {
      case 'text':
        this.text(ev.text ?? '');
        break;
      case 'tool_call': {
        this.endBubble();
        const c = toolCard(ev.call?.name, ev.call?.args, ev.call?.id);
        this.cards.set(ev.call?.id, c);
        this.log.append(c.el);
        break;
      }
      case 'tool_result': {
        const r = ev.result ?? {};
        let c = this.cards.get(r.call_id);
        if (!c) {
          c = toolCard(r.name, undefined, r.call_id);
          this.log.append(c.el);
        }
        c.result(r);
        break;
      }
      case 'pause':
        this.endBubble();
        if (ev.pause) this.on.pause(ev.pause);
        break;
      case 'next_actions':
        this.on.actions(ev.actions ?? []);
        break;
      case 'usage':
        this.addUsage(ev);
        break;
      case 'done':
        this.finish(ev.stop);
        break;
      case 'error':
        this.fail(ev.error || 'the turn failed');
        break;
    }
  }

  text(delta) {
    if (!this.bubble) {
      this.bubble = new Answer();
      this.log.append(this.bubble.el);
    }
    this.bubble.add(delta);
  }

  endBubble() {
    this.bubble?.end();
    this.bubble = null;
  }

  addUsage(ev) {
    const u = ev.usage ?? {};
    const t = this.totals;
    t.input += u.input_tokens ?? 0;
    t.cached += u.cached_input_tokens ?? 0;
    t.output += u.output_tokens ?? 0;
    t.cost += ev.cost_micros ?? 0;
    t.calls++;
    const parts = [`${number(t.input)} input tokens${t.cached ? ` (${number(t.cached)} cached)` : ''}`,
      `${number(t.output)} output`, `${t.calls} model call${t.calls === 1 ? '' : 's'}`];
    if (t.cost) parts.push(`$${(t.cost / 1e6).toFixed(4)}`);
    this.on.usage(`Last turn: ${parts.join(' · ')}`);
  }

  // finish ends the turn once: the streaming text is complete, calls that
  // never got a result say so, and a stop other than an answer or a
  // question is noted.
  finish(stop) {
    if (this.ended) return;
    this.ended = true;
    this.endBubble();
    for (const c of this.cards.values()) c.unanswered();
    const notes = {
      cancelled: 'Turn cancelled.',
      step_limit: 'The turn stopped at its step limit.',
    };
    if (notes[stop]) this.log.append(h('li', { class: 'msg note' }, notes[stop]));
  }

  fail(message) {
    if (this.ended) return;
    if (this.cancelling) {
      this.finish('cancelled');
      return;
    }
    this.finish();
    this.noModel = isNoModel(message);
    this.log.append(h('li', { class: 'msg error', role: 'alert' }, h('span', { class: 'who' }, 'Error'), h('div', { class: 'text' }, message)));
  }
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
    this.el = messageItem('assistant', '');
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

// messageItem shows one message: the agent's as Markdown, anyone else's
// as plain text.
function messageItem(role, text, ...extra) {
  const who = { user: 'You', assistant: 'Agent', thought: 'Thought' }[role] ?? role;
  const body = role === 'assistant' ? h('div', { class: 'text md' }, markdown(text)) : h('div', { class: 'text' }, text);
  return h('li', { class: `msg ${role}` }, h('span', { class: 'who' }, who), body, extra);
}

// toolCard shows one tool call: its name, arguments and, once known, its
// result or error.
export function toolCard(name, args, id) {
  const badge = h('span', { class: 'badge' }, 'running');
  const body = h('div', { class: 'tool-result' }, h('p', { class: 'label' }, 'Result'), h('p', { class: 'muted' }, 'Running…'));
  const el = h('li', { class: 'tool-card running', 'data-call-id': id ?? '' },
    h('div', { class: 'tool-head' }, h('span', { class: 'kind' }, 'Tool call'), h('span', { class: 'tool-name' }, name ?? '?'), badge),
    args === undefined ? null : [h('p', { class: 'label' }, 'Arguments'), h('pre', { class: 'args', tabindex: '0' }, pretty(args) || '{}')],
    body);
  let done = false;
  return {
    el,
    result(r) {
      done = true;
      el.classList.remove('running');
      el.classList.toggle('error', Boolean(r.is_error));
      badge.textContent = r.is_error ? 'error' : 'done';
      replace(body, h('p', { class: 'label' }, r.is_error ? 'Error' : 'Result'),
        h('pre', { class: 'result', tabindex: '0' }, pretty(r.content ?? '')),
        r.ref ? h('p', { class: 'muted' }, `Shortened here; the full result is stored as ${r.ref}.`) : null);
    },
    unanswered() {
      if (done) return;
      done = true;
      el.classList.remove('running');
      badge.textContent = 'no result';
      replace(body, h('p', { class: 'muted' }, 'The turn ended before this call returned.'));
    },
  };
}

// transcriptItems renders a stored transcript (GET …/messages) as list
// items. Context messages stay in the inspector; each turn's first user
// message links to its inspection.
export function transcriptItems(messages, conversationID) {
  const items = [];
  const cards = new Map();
  const seenTurns = new Set();
  for (const m of messages) {
    switch (m.role) {
      case 'user': {
        const first = m.turn_id && !seenTurns.has(m.turn_id);
        if (m.turn_id) seenTurns.add(m.turn_id);
        items.push(messageItem('user', m.content, first
          ? h('a', { class: 'inspect-link', href: `#/inspect/${enc(conversationID)}?turn=${enc(m.turn_id)}` }, 'Inspect this turn')
          : null));
        break;
      }
      case 'assistant':
        if (m.content) items.push(messageItem('assistant', m.content));
        break;
      case 'tool_call': {
        const c = toolCard(m.tool_name, m.content, m.tool_call_id);
        cards.set(m.tool_call_id, c);
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
        break;
      }
      case 'thought':
        items.push(h('li', { class: 'msg thought' },
          h('details', null, h('summary', null, 'Thought'), h('div', { class: 'text' }, m.content))));
        break;
    }
  }
  for (const c of cards.values()) c.unanswered();
  return items;
}

// pauseBlock shows a clarifying question in the transcript and returns
// the block that offers its suggested answer as a button.
export function pauseBlock(pause, log, answer) {
  log.append(h('li', { class: 'msg assistant question' }, h('span', { class: 'who' }, 'Question'), h('div', { class: 'text' }, pause.question)));
  return h('div', { class: 'pause', role: 'group', 'aria-labelledby': 'pause-h' },
    h('p', { id: 'pause-h', class: 'label' }, pause.suggested ? 'Suggested answer' : 'The agent asked a question'),
    pause.suggested
      ? h('button', { type: 'button', class: 'suggested', onclick: () => answer(pause.suggested) }, pause.suggested)
      : null,
    h('p', { class: 'muted' }, pause.suggested ? 'Or write your own answer below.' : 'Write your answer below.'));
}

// noModelHelp says how to connect a model (docs/models.md, in short).
export function noModelHelp(conversationID, draft) {
  const q = new URLSearchParams();
  if (draft) q.set('message', draft);
  const code = (t) => h('code', null, t);
  const rows = [
    ['openai', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'],
    ['anthropic', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
    ['gemini', 'GEMINI_API_KEY or GOOGLE_API_KEY', 'GEMINI_BASE_URL'],
    ['ollama', '—', 'OLLAMA_HOST (default http://localhost:11434)'],
    ['openrouter', 'OPENROUTER_API_KEY', 'https://openrouter.ai/api/v1'],
    ['any other name', 'from --config', 'from --config (vLLM, llama.cpp server, LM Studio)'],
  ];
  return h('section', { class: 'notice no-model', 'aria-labelledby': 'no-model-h' },
    h('h2', { id: 'no-model-h' }, 'Connect a model'),
    h('p', null, 'No model is connected, so the agent cannot answer yet. On the machine that runs ', code('quiver serve'), ':'),
    h('ul', null,
      h('li', null, 'set ', code('OPENAI_API_KEY'), ', ', code('ANTHROPIC_API_KEY'), ' or ', code('GEMINI_API_KEY'),
        ' in its environment and restart it; the agent\'s ', code('model:'), ' (', code('provider:model'), ', e.g. ',
        code('openai:gpt-4.1-mini'), ') chooses the provider;'),
      h('li', null, 'or start Ollama on ', code('localhost:11434'), ' and pull a model (', code('ollama pull qwen3:8b'),
        '): with no provider configured, Quiver uses the agent\'s model if Ollama has it, else Ollama\'s first one;'),
      h('li', null, 'or name an OpenAI-compatible server with its key and base URL in ', code('--config'), '.')),
    h('div', { class: 'table-wrap' }, h('table', null,
      h('caption', null, 'Providers (from docs/models.md)'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'provider'), h('th', { scope: 'col' }, 'key'), h('th', { scope: 'col' }, 'base URL'))),
      h('tbody', null, rows.map((r) => h('tr', null, r.map((c) => h('td', null, c))))))),
    h('p', null, 'The inspector works without a model: ',
      h('a', { href: `#/inspect/${enc(conversationID)}${q.size ? '?' + q : ''}` }, 'see what this message would send'), '.'));
}
