// Chat: the conversation list, a new-conversation form, and one
// conversation's transcript with a composer that streams turns.
import { h, heading, errorBox, when, replace } from './dom.js';
import { Turn, transcriptItems, pauseBlock, noModelHelp } from './turn.js';

const enc = encodeURIComponent;

export async function render({ api, me, main, args }) {
  const id = args[0];
  const [list, agents] = await Promise.all([api.get('/api/conversations'), agentNames(api)]);
  const aside = sidebar(api, list?.conversations ?? [], agents, id);
  if (!id) {
    main.append(h('div', { class: 'chat' },
      h('section', { class: 'thread empty' }, heading('Chat'),
        h('p', null, agents.length
          ? 'Pick a conversation, or start a new one with an agent.'
          : ['No agents yet. ', h('a', { href: '#/agents/new' }, 'Create one'), ' to start chatting.'])),
      aside));
    return;
  }
  const convReq = api.get(`/api/conversations/${enc(id)}`);
  const [conv, msgs, model] = await Promise.all([
    convReq,
    api.get(`/api/conversations/${enc(id)}/messages`),
    convReq.then((c) => modelStatus(api, c.agent)),
  ]);
  const thread = new Thread(api, conv, model?.connected === false ? modelNotice(conv, model, me) : null);
  thread.load(msgs?.messages ?? [], Boolean(msgs?.more));
  main.append(h('div', { class: 'chat' }, thread.el, aside));
  return thread.input;
}

// agentNames lists the organisation's agents; an error leaves it empty
// (the chat still works for existing conversations).
async function agentNames(api) {
  try {
    const res = await api.get('/api/agents');
    return (res?.agents ?? []).map((a) => a.name).sort();
  } catch {
    return [];
  }
}

// modelStatus asks whether the agent's model is connected; null when the
// server cannot say (the chat then finds out when a message is sent).
async function modelStatus(api, agent) {
  try {
    return await api.get(`/api/agents/${enc(agent)}/model-status`);
  } catch {
    return null;
  }
}

// modelNotice says, before anything is sent, that the agent's model is
// not connected, with the server's help, and what works meanwhile.
function modelNotice(conv, status, me) {
  return h('section', { class: 'notice model-notice', id: 'model-notice', 'aria-labelledby': 'model-notice-h' },
    h('h2', { id: 'model-notice-h' }, 'No model is connected'),
    h('p', { id: 'model-notice-text' }, status.model
      ? `The agent's model, ${status.model}, cannot be reached, so the agent cannot answer yet.`
      : 'The agent\'s model cannot be reached, so the agent cannot answer yet.'),
    status.help ? h('p', { class: 'help-text' }, status.help) : null,
    h('p', null, 'Meanwhile, the ',
      h('a', { href: `#/inspect/${enc(conv.id)}` }, 'inspector'), ' shows what a message would send, and the ',
      h('a', { href: `#/tools?agent=${enc(conv.agent)}` }, 'tool console'), ' runs the agent\'s tools by hand',
      me?.role === 'admin' ? [', and model keys are set in ', h('a', { href: '#/settings' }, 'Settings')] : null, '.'));
}

function sidebar(api, conversations, agents, current) {
  const select = h('select', { id: 'new-agent', name: 'agent', required: true },
    agents.map((n) => h('option', { value: n }, n)));
  const status = h('div', { class: 'form-status' });
  const form = h('form', { class: 'new-conv', 'aria-label': 'New conversation' },
    h('label', { for: 'new-agent' }, 'Agent'),
    h('div', { class: 'row' }, select, h('button', { type: 'submit', class: 'primary', disabled: !agents.length }, 'New conversation')),
    status);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    replace(status);
    try {
      const c = await api.post('/api/conversations', { agent: select.value });
      location.hash = `#/chat/${enc(c.id)}`;
    } catch (err) {
      status.append(errorBox(err, 'Could not start a conversation'));
    }
  });
  const items = conversations.map((c) => h('li', null,
    h('a', { href: `#/chat/${enc(c.id)}`, 'aria-current': c.id === current ? 'page' : null },
      h('span', { class: 'conv-title' }, c.title || `Chat with ${c.agent}`),
      h('span', { class: 'conv-meta' }, `${c.agent} · ${when(c.updated_at)}`))));
  return h('aside', { class: 'convs', 'aria-labelledby': 'convs-h' },
    h('h2', { id: 'convs-h' }, 'Conversations'),
    form,
    items.length ? h('ul', { class: 'conv-list' }, items) : h('p', { class: 'muted' }, 'No conversations yet.'));
}

// Thread is one conversation on screen: its transcript, the question it
// is paused on, suggestion chips, and the composer.
class Thread {
  // notice, when given, says the model is not connected.
  constructor(api, conv, notice) {
    this.api = api;
    this.conv = conv;
    this.notice = notice;
    this.base = `/api/conversations/${enc(conv.id)}`;
    this.paused = Boolean(conv.pause);
    this.turn = null;
    this.log = h('ol', { class: 'transcript', role: 'log', 'aria-live': 'polite', 'aria-label': 'Transcript' });
    this.extras = h('div', { class: 'extras' });
    this.input = h('textarea', {
      id: 'message', name: 'message', rows: 3, autocomplete: 'off',
      'aria-describedby': notice ? 'model-notice-text' : null,
      placeholder: 'Write a message… (Enter sends, Shift+Enter adds a line)',
      onkeydown: (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          this.form.requestSubmit();
        }
      },
    });
    this.sendButton = h('button', { type: 'submit', class: 'primary', id: 'send' }, 'Send');
    this.cancelButton = h('button', { type: 'button', id: 'cancel', hidden: true, onclick: () => this.cancel() }, 'Cancel turn');
    this.usage = h('p', { class: 'usage', id: 'usage', 'aria-live': 'polite' });
    this.form = h('form', { class: 'composer', onsubmit: (e) => { e.preventDefault(); this.send(this.input.value); } },
      h('label', { for: 'message' }, this.paused ? 'Your answer' : 'Message'),
      this.input,
      h('div', { class: 'row' }, this.sendButton, this.cancelButton,
        h('button', { type: 'button', class: 'secondary', onclick: () => this.inspectDraft() }, 'Inspect draft')));
    this.el = h('section', { class: 'thread', 'aria-labelledby': 'thread-h' },
      h('div', { class: 'thread-head' },
        h('h1', { id: 'thread-h', tabindex: '-1' }, conv.title || `Chat with ${conv.agent}`),
        h('a', { href: `#/inspect/${enc(conv.id)}` }, 'Inspector')),
      conv.running ? h('p', { class: 'notice' }, 'A turn of this conversation is still running; reload to see its answer.') : null,
      this.log, this.extras, notice, this.form, this.usage);
  }

  load(messages, more) {
    this.log.append(...transcriptItems(messages, this.conv.id));
    if (more) this.olderButton(messages[0]?.seq);
    if (this.conv.pause) this.showPause(this.conv.pause);
  }

  // olderButton offers the transcript's previous page (the API sends the
  // newest entries first).
  olderButton(before) {
    const item = h('li', { class: 'older' });
    const button = h('button', { type: 'button', class: 'secondary' }, 'Show older messages');
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const res = await this.api.get(`${this.base}/messages?before=${before}`);
        const page = res?.messages ?? [];
        item.replaceWith(...transcriptItems(page, this.conv.id));
        if (res?.more && page.length) this.olderButton(page[0].seq);
      } catch (err) {
        button.disabled = false;
        replace(item, button, errorBox(err, 'Could not load older messages'));
      }
    });
    item.append(button);
    this.log.prepend(item);
  }

  showPause(pause) {
    this.paused = true;
    this.form.querySelector('label').textContent = 'Your answer';
    this.extras.append(pauseBlock(pause, this.log, (answer) => this.send(answer, true)));
  }

  showChips(actions) {
    if (!actions?.length) return;
    this.extras.append(h('div', { class: 'chips', role: 'group', 'aria-label': 'Suggested next messages' },
      actions.map((a) => h('button', { type: 'button', class: 'chip', onclick: () => this.send(a, false) }, a))));
  }

  // send runs one turn: a new message, or the answer to the paused question.
  async send(text, answer = this.paused) {
    text = text.trim();
    if (!text || this.turn) return;
    replace(this.extras);
    this.input.value = '';
    this.paused = false;
    this.form.querySelector('label').textContent = 'Message';
    this.turn = new Turn(this.log, this.conv.id, {
      pause: (p) => this.showPause(p),
      actions: (a) => this.showChips(a),
      usage: (text) => { this.usage.textContent = text; },
    });
    this.turn.user(text);
    this.busy(true);
    const path = answer ? `${this.base}/answer` : `${this.base}/messages`;
    const body = answer ? { answer: text } : { message: text };
    try {
      await this.streamTurn(path, body, this.turn);
      this.turn.finish();
    } catch (err) {
      if (this.turn.abort.signal.aborted) {
        this.turn.finish('cancelled');
      } else {
        this.turn.fail(err.message);
      }
    } finally {
      if (this.turn.noModel && !this.notice) this.extras.append(noModelHelp(this.conv.id, text));
      this.turn = null;
      this.busy(false);
      this.input.focus();
    }
    if (!this.conv.title) await this.refreshTitle();
  }

  // streamTurn sends the message and shows the turn's events. A stream
  // that breaks after the turn started (a dropped connection, a server
  // restarting behind a load balancer) is resumed from the last event
  // shown (GET …/events?after=), a few times, until the turn's done or
  // error: the turn goes on on the server meanwhile.
  async streamTurn(path, body, turn) {
    const signal = turn.abort.signal;
    const seen = { id: 0, turn: '', ended: false };
    const onEvent = (ev, id) => {
      if (/^\d+$/.test(id)) seen.id = Number(id);
      if (ev.turn_id) seen.turn = ev.turn_id;
      if (ev.type === 'done' || ev.type === 'error') seen.ended = true;
      turn.event(ev);
    };
    try {
      await this.api.stream(path, body, onEvent, signal);
    } catch (err) {
      if (!seen.turn || signal.aborted) throw err;
    }
    for (let tries = 0; !seen.ended && seen.turn && !signal.aborted; tries++) {
      if (tries === 3) throw new Error('lost the connection to the turn; reload the conversation to see how it ended');
      try {
        const more = await this.api.follow(`${this.base}/events?turn=${enc(seen.turn)}&after=${seen.id}`, onEvent, signal);
        if (!more) seen.ended = true;
      } catch (err) {
        if (signal.aborted) throw err;
      }
    }
  }

  // refreshTitle shows the title the server gave the conversation from its
  // first message, in the heading and the conversation list.
  async refreshTitle() {
    let c;
    try {
      c = await this.api.get(this.base);
    } catch {
      return; // the old label stays; nothing else depends on it
    }
    if (!c?.title) return;
    this.conv.title = c.title;
    this.el.querySelector('#thread-h').textContent = c.title;
    const link = document.querySelector(`.conv-list a[href="#/chat/${enc(this.conv.id)}"] .conv-title`);
    if (link) link.textContent = c.title;
  }

  busy(on) {
    this.sendButton.disabled = on;
    this.cancelButton.hidden = !on;
    this.log.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  // cancel asks the server to stop the turn (it answers every pending tool
  // call and ends the stream); when that fails, the page stops reading
  // the stream (the turn goes on on the server, within its limits).
  async cancel() {
    const t = this.turn;
    if (!t) return;
    t.cancelling = true;
    this.cancelButton.disabled = true;
    try {
      await this.api.post(`${this.base}/cancel`);
    } catch {
      t.abort.abort();
    } finally {
      this.cancelButton.disabled = false;
    }
  }

  inspectDraft() {
    const q = new URLSearchParams();
    if (this.input.value.trim()) q.set('message', this.input.value.trim());
    location.hash = `#/inspect/${enc(this.conv.id)}${q.size ? '?' + q : ''}`;
  }
}
