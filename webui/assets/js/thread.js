// Thread is one conversation on screen: its header, the transcript (which
// follows the newest text, follow.js), the question it is paused on,
// suggestion chips, a working state, and the composer pinned below with
// Send and Stop. A thread without a conversation is a new chat: its first
// message goes to an id of the page's making with the agent and model
// picked (POST /api/conversations/{id}/messages), which stores the
// conversation with it, so nothing is stored before a message is; a
// message the server refuses (or that does not reach it) comes back in
// the composer with the reason, and nothing is stored. Files attached
// (the attach button, dropped on the thread, pasted in the message box)
// are uploaded at once and go with the next message (attachments.js); a
// new chat's first file stores its conversation (POST /api/conversations)
// so that the file has one to belong to.
import { ApiError } from './api.js';
import { h, icon, errorBox, replace } from './dom.js';
import { t } from './i18n.js';
import { Follow } from './follow.js';
import { Turn, transcriptItems, pauseBlock, noModelHelp, isNoModel } from './turn.js';
import { exportMenu } from './exporter.js';
import { decorate } from './branches.js';
import { Tray, Placement, addFiles } from './attachments.js';
import { parentLink, pinsMenu } from './marks.js';

const enc = encodeURIComponent;

// newID makes a new conversation's id: a random UUID (crypto.randomUUID
// needs a secure context; the same 122 random bits otherwise).
function newID() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export class Thread {
  // conv is the conversation, or null for a new chat. opts: agents (the
  // names to pick from in a new chat), agent (the one picked first),
  // notice (an element saying the model is not connected), toggle (the
  // sidebar's button, put in the header), created(conv) (a new chat's
  // conversation now exists), titled(conv) (its title changed),
  // agentChanged(name) (a new chat's agent was picked), artifacts (the
  // artifacts' menu, put in the header once the conversation exists).
  constructor(api, conv, opts = {}) {
    this.api = api;
    this.conv = conv;
    this.opts = opts;
    this.paused = Boolean(conv?.pause);
    this.turn = null;
    this.build();
    this.setNotice(opts.notice ?? null);
  }

  get base() {
    return `/api/conversations/${enc(this.conv.id)}`;
  }

  build() {
    const conv = this.conv;
    this.log = h('ol', { class: 'transcript', 'aria-live': 'polite', 'aria-label': t('chat.transcript') });
    this.extras = h('div', { class: 'extras' });
    this.working = h('div', { class: 'working', id: 'working', role: 'status', hidden: true });
    this.noticeSlot = h('div', { class: 'notice-slot' });
    this.landing = conv ? null : this.landingIntro();
    // Room for what comes next: attachments in the composer (empty and
    // hidden until then). The agent's checklist is the turn's own, in the
    // transcript above its answer (turn.js).
    this.content = h('div', { class: 'scroll-content' },
      conv?.running ? h('p', { class: 'notice' }, t('chat.stillRunning')) : null,
      this.landing, this.log, this.extras, this.working, this.noticeSlot);
    this.scroller = h('div', { class: 'scroller', id: 'scroller' }, this.content);
    const jump = h('button', { type: 'button', class: 'jump', id: 'jump', hidden: true }, h('span', { 'aria-hidden': 'true' }, '↓ '), t('chat.jump'));
    this.follow = new Follow(this.scroller, this.content, jump);
    this.follow.onJump = () => this.input.focus({ preventScroll: true });
    this.el = h('section', { class: 'thread', 'aria-labelledby': 'thread-h', 'data-drop': t('attach.drop') },
      this.header(), this.scroller, h('div', { class: 'jump-wrap' }, jump), this.composer());
    this.dropTarget();
  }

  // dropTarget takes files dropped anywhere on the thread.
  dropTarget() {
    const files = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
    let depth = 0;
    this.el.addEventListener('dragenter', (e) => {
      if (!files(e)) return;
      e.preventDefault();
      depth++;
      this.el.classList.add('dropping');
    });
    this.el.addEventListener('dragover', (e) => {
      if (!files(e)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    });
    this.el.addEventListener('dragleave', () => {
      depth = Math.max(0, depth - 1);
      if (!depth) this.el.classList.remove('dropping');
    });
    this.el.addEventListener('drop', (e) => {
      if (!files(e)) return;
      e.preventDefault();
      depth = 0;
      this.el.classList.remove('dropping');
      this.tray.add(e.dataTransfer.files);
    });
  }

  // attachControls are the attach button and the file picker it opens.
  attachControls() {
    this.picker = h('input', { type: 'file', id: 'attach-input', multiple: true, hidden: true, tabindex: '-1',
      onchange: () => {
        this.tray.add([...this.picker.files]);
        this.picker.value = '';
      } });
    this.attachButton = h('button', { type: 'button', class: 'secondary small', id: 'attach', 'aria-describedby': 'attach-help',
      onclick: () => this.picker.click() }, icon('clip'), ' ', t('attach.button'));
    return h('span', { class: 'attach-slot' }, this.attachButton, this.picker,
      h('span', { class: 'sr-only', id: 'attach-help' }, t('attach.help')));
  }

  // conversation resolves the id files are attached to: a new chat's
  // conversation is stored first, with the agent and model picked, and
  // becomes a conversation like any other.
  conversation() {
    // (A first message being sent stores its conversation itself.)
    if (this.conv && (!this.fresh || this.turn)) return Promise.resolve(this.conv.id);
    if (!this.storing) {
      this.storing = (async () => {
        const agent = this.agentSelect?.value;
        if (!agent) throw new Error(t('attach.noAgent'));
        const model = this.modelSelect && this.modelSelect.value !== this.modelDefault ? this.modelSelect.value : '';
        let conv = await this.api.post('/api/conversations', { agent });
        if (model) conv = (await this.api.patch(`/api/conversations/${enc(conv.id)}`, { model })) ?? conv;
        this.conv = conv;
        this.modelSaved = model || this.modelDefault;
        this.fresh = true;
        this.started();
        return conv.id;
      })();
      this.storing.catch(() => { this.storing = null; });
    }
    return this.storing;
  }

  header() {
    this.title = h('h1', { id: 'thread-h', tabindex: '-1' }, this.heading());
    this.actions = h('div', { class: 'thread-actions' });
    this.showActions();
    this.parent = h('div', { class: 'parent-slot' }, parentLink(this.conv));
    return h('div', { class: 'thread-head' }, this.opts.toggle ?? null, h('div', { class: 'thread-title' }, this.title, this.parent), this.actions);
  }

  heading() {
    if (!this.conv) return t('chat.new');
    return this.conv.title || t('chat.untitled', { agent: this.conv.agent });
  }

  // showActions offers a conversation's export and inspector (a new chat
  // has neither yet).
  showActions() {
    if (!this.conv) {
      replace(this.actions);
      return;
    }
    replace(this.actions, this.opts.artifacts ?? null, pinsMenu(this.api, this.conv.id, this.log), exportMenu(this.api, this.conv),
      h('a', { href: `#/inspect/${enc(this.conv.id)}`, class: 'button small' }, t('chat.inspector')));
  }

  landingIntro() {
    const agents = this.opts.agents ?? [];
    return h('div', { class: 'landing' },
      h('p', { class: 'landing-title' }, t('chat.landingTitle')),
      h('p', { class: 'muted' }, agents.length ? t('chat.landingText')
        : [t('chat.noAgents'), ' ', h('a', { href: '#/agents/new' }, t('chat.createAgent'))]));
  }

  composer() {
    this.input = h('textarea', {
      id: 'message', name: 'message', rows: 2, autocomplete: 'off',
      placeholder: t('chat.placeholder'),
      // Pasted files are attached; a paste that holds text too (an
      // office program's copy carries a picture of it) pastes the text.
      onpaste: (e) => {
        const files = [...(e.clipboardData?.files ?? [])];
        if (!files.length || e.clipboardData.types.includes('text/plain')) return;
        e.preventDefault();
        this.tray.add(files);
      },
      onkeydown: (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          this.form.requestSubmit();
        }
      },
    });
    this.label = h('label', { for: 'message', class: 'composer-label' }, this.paused ? t('chat.yourAnswer') : t('chat.message'));
    this.sendButton = h('button', { type: 'submit', class: 'primary', id: 'send' }, t('chat.send'));
    this.cancelButton = h('button', { type: 'button', id: 'cancel', class: 'stop', hidden: true, onclick: () => this.cancel() },
      h('span', { class: 'icon', 'aria-hidden': 'true' }, '■ '), t('chat.stop'));
    this.status = h('div', { class: 'composer-status', id: 'composer-status' });
    this.usage = h('p', { class: 'usage', id: 'usage', 'aria-live': 'polite' });
    const left = [];
    // The model picker goes here once the agent's models are known
    // (showModels).
    this.modelSlot = h('span', { class: 'model-slot' });
    this.attachSlot = this.attachControls();
    if (!this.conv) {
      const agents = this.opts.agents ?? [];
      this.agentSelect = h('select', { id: 'new-agent', name: 'agent', class: 'narrow', 'aria-label': t('chat.agent'),
        onchange: () => this.opts.agentChanged?.(this.agentSelect.value) },
      agents.map((n) => h('option', { value: n, selected: n === this.opts.agent }, n)));
      left.push(this.attachSlot, h('label', { for: 'new-agent', class: 'inline' }, t('chat.agent')), this.agentSelect, this.modelSlot);
      this.sendButton.disabled = !agents.length;
    } else {
      left.push(this.attachSlot, this.inspectDraftButton(), this.modelSlot);
    }
    this.composerLeft = h('div', { class: 'composer-left' }, left);
    const files = h('ul', { class: 'attachments', id: 'attachments', hidden: true, 'aria-label': t('chat.attachments') });
    const announce = h('span', { class: 'sr-only', role: 'status', id: 'attach-status' });
    this.tray = new Tray(this.api, files, announce, { conversation: () => this.conversation(), focus: () => this.input.focus() });
    this.form = h('form', { class: this.conv ? 'composer' : 'composer new-conv', 'aria-label': this.conv ? null : t('chat.new'), onsubmit: (e) => { e.preventDefault(); this.send(this.input.value); } },
      this.label,
      files, announce,
      this.input,
      h('div', { class: 'composer-row' }, this.composerLeft,
        h('div', { class: 'composer-right' }, this.cancelButton, this.sendButton)));
    return h('div', { class: 'composer-wrap' }, this.status, this.form, this.usage);
  }

  inspectDraftButton() {
    return h('button', { type: 'button', class: 'secondary small', id: 'inspect-draft', onclick: () => this.inspectDraft() }, t('chat.inspectDraft'));
  }

  // showModels offers the models the conversation may run on (res: GET
  // …/models' answer, null when unknown): a picker when the agent offers
  // more than one, with the ones the organisation does not connect shown
  // and not choosable; none otherwise. A stored conversation's choice is
  // saved as soon as it is made (modelChanged); a new chat's goes with its
  // first message (create).
  showModels(res) {
    const models = res?.models ?? [];
    this.modelSelect = null;
    if (models.length < 2) {
      replace(this.modelSlot);
      return;
    }
    this.modelDefault = models.find((m) => m.default)?.model ?? '';
    this.modelSaved = res.model || this.modelDefault;
    this.modelSelect = h('select', { id: 'model-pick', name: 'model', 'aria-describedby': 'model-pick-help',
      onchange: () => this.modelChanged() },
    models.map((m) => h('option', { value: m.model, selected: m.model === this.modelSaved, disabled: !m.connected, title: m.help || null },
      m.default ? t('chat.modelDefault', { model: m.model }) : m.connected ? m.model : t('chat.modelOff', { model: m.model }))));
    this.modelSelect.disabled = Boolean(this.turn);
    replace(this.modelSlot, h('label', { for: 'model-pick', class: 'inline' }, t('chat.model')), this.modelSelect,
      h('span', { class: 'sr-only', id: 'model-pick-help' }, t('chat.modelHelp')));
  }

  // modelChanged saves a stored conversation's new model (the agent's own
  // as "", so that it follows the agent); a refusal puts the saved one
  // back and says why.
  async modelChanged() {
    const pick = this.modelSelect;
    if (!this.conv || !pick) return;
    replace(this.status);
    const chosen = pick.value;
    pick.disabled = true;
    try {
      const c = await this.api.patch(this.base, { model: chosen === this.modelDefault ? '' : chosen });
      this.conv.model = c?.model ?? chosen;
      this.modelSaved = chosen;
    } catch (err) {
      pick.value = this.modelSaved;
      this.status.append(errorBox(err, t('chat.modelNotSaved')));
    } finally {
      pick.disabled = Boolean(this.turn);
    }
  }

  // setNotice shows (or, with null, removes) the no-model notice; the
  // message box names it as its description.
  setNotice(notice) {
    this.notice = notice;
    replace(this.noticeSlot, notice);
    if (notice) this.input.setAttribute('aria-describedby', 'model-notice-text');
    else this.input.removeAttribute('aria-describedby');
  }

  // load shows a stored transcript (GET …/messages: the branch shown,
  // with turns, where each of its turns stands among its siblings) with
  // the conversation's files (GET …/attachments; null when unknown):
  // each with its message, the ones not sent yet back in the composer.
  load(messages, more, turns, files) {
    this.placement = new Placement(files ?? []);
    const placed = this.placement.place(messages, more);
    const items = transcriptItems(messages, this.conv.id, placed.byMessage);
    this.earliestUser = items.find((i) => i.classList.contains('user')) ?? null;
    this.log.append(...items);
    this.tray.restore(placed.unsent);
    if (more) this.olderButton(messages[0]?.seq);
    this.turns = turns ?? [];
    this.branchControls();
    if (this.conv.pause) this.showPause(this.conv.pause);
    this.follow.toBottom();
  }

  // branchControls adds regenerate, edit and the pagers to the transcript
  // shown (branches.js), and the note about replaced branches when there
  // are any.
  branchControls() {
    this.branchNote?.remove();
    this.branchNote = decorate(this.log, this.turns, {
      regenerate: (turnID, text) => this.resend(turnID, text),
      edit: (turnID, text) => this.resend(turnID, text),
      show: (turnID) => this.showBranch(turnID),
    });
    if (this.branchNote) this.log.after(this.branchNote);
  }

  // resend sends text as a turn beside turnID (regenerate: its own text;
  // edit: the edited one): what the turn and every later one showed
  // leaves the screen, the new turn streams in, and the transcript is
  // read again for the pagers.
  async resend(turnID, text) {
    if (this.turn || !text.trim()) return;
    const first = this.log.querySelector(`li.msg.user[data-turn="${CSS.escape(turnID)}"][data-first="true"]`);
    if (first) {
      while (first.nextSibling) first.nextSibling.remove();
      first.remove();
    }
    this.branchNote?.remove();
    await this.send(text, false, turnID);
    await this.reload();
  }

  // showBranch shows the branch through turnID (POST …/branch), then
  // reads the transcript again.
  async showBranch(turnID) {
    if (this.turn) return;
    replace(this.status);
    try {
      await this.api.post(`${this.base}/branch`, { turn: turnID });
    } catch (err) {
      this.status.append(errorBox(err, t('branch.failed')));
      return;
    }
    await this.reload();
  }

  // refreshTurns reads where the turns stand (GET …/messages' turns) after
  // a turn ran, and puts the branch controls where they now belong (the
  // regenerate button on the new answer); on a failure the old ones stay.
  async refreshTurns() {
    try {
      const msgs = await this.api.get(`${this.base}/messages`);
      this.turns = msgs?.turns ?? [];
    } catch {
      return;
    }
    this.branchControls();
  }

  // reload reads the conversation and its transcript again and shows
  // them in place of what is on screen.
  async reload() {
    let conv, msgs, files;
    try {
      [conv, msgs, files] = await Promise.all([this.api.get(this.base), this.api.get(`${this.base}/messages`), listFiles(this.api, this.conv.id)]);
    } catch (err) {
      this.status.append(errorBox(err, t('branch.failed'), () => this.reload()));
      return;
    }
    replace(this.log);
    replace(this.extras);
    this.conv.pause = conv?.pause;
    this.paused = Boolean(conv?.pause);
    this.label.textContent = this.paused ? t('chat.yourAnswer') : t('chat.message');
    this.tray.take();
    this.load(msgs?.messages ?? [], Boolean(msgs?.more), msgs?.turns, files);
  }

  // olderButton offers the transcript's previous page (the API sends the
  // newest entries first).
  olderButton(before) {
    const item = h('li', { class: 'older' });
    const button = h('button', { type: 'button', class: 'secondary' }, t('chat.older'));
    const load = async () => {
      button.disabled = true;
      try {
        const res = await this.api.get(`${this.base}/messages?before=${before}`);
        const page = res?.messages ?? [];
        const placed = this.placement.place(page, Boolean(res?.more));
        if (this.earliestUser) addFiles(this.earliestUser, this.conv.id, placed.earlier);
        const items = transcriptItems(page, this.conv.id, placed.byMessage);
        this.earliestUser = items.find((i) => i.classList.contains('user')) ?? this.earliestUser;
        item.replaceWith(...items);
        if (res?.more && page.length) this.olderButton(page[0].seq);
      } catch (err) {
        button.disabled = false;
        replace(item, button, errorBox(err, t('chat.olderFailed')));
      }
    };
    button.addEventListener('click', load);
    item.append(button);
    this.log.prepend(item);
  }

  showPause(pause) {
    this.paused = true;
    this.label.textContent = t('chat.yourAnswer');
    this.extras.append(pauseBlock(pause, this.log, (answer) => this.send(answer, true)));
  }

  showChips(actions) {
    if (!actions?.length) return;
    this.extras.append(h('div', { class: 'chips', role: 'group', 'aria-label': t('chat.suggestions') },
      actions.map((a) => h('button', { type: 'button', class: 'chip', onclick: () => this.send(a, false) }, a))));
  }

  // showWorking shows what the turn is doing until text streams in:
  // thinking, or running a tool (named).
  showWorking(state) {
    if (!state) {
      this.working.hidden = true;
      replace(this.working);
      return;
    }
    const text = state === 'thinking' ? t('chat.thinking') : t('chat.runningTool', { tool: state.tool });
    replace(this.working, h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', { class: 'working-text' }, text));
    this.working.classList.toggle('tool', state !== 'thinking');
    this.working.hidden = false;
  }

  // send runs one turn: a new message, or the answer to the paused
  // question. Before any event, a refusal (or a request that never reached
  // the server) takes the message off the transcript and puts it back in
  // the composer with the reason; once the turn runs, a failure shows in
  // the transcript.
  // replaces, when set, makes the turn a branch beside that turn
  // (regenerate, edit-and-resend; see resend).
  async send(text, answer = this.paused, replaces = '') {
    text = text.trim();
    if (!text || this.turn) return;
    replace(this.status);
    if (this.tray.pending()) {
      this.status.append(h('p', { class: 'alert', role: 'alert' }, t('attach.wait')));
      return;
    }
    const created = !this.conv;
    if (created && !(await this.create())) return;
    this.fresh = created;
    if (this.landing) this.landing.hidden = true;
    const before = { extras: [...this.extras.childNodes], paused: this.paused };
    replace(this.extras);
    this.input.value = '';
    this.paused = false;
    this.label.textContent = t('chat.message');
    const turn = new Turn(this.log, this.conv.id, {
      pause: (p) => this.showPause(p),
      actions: (a) => this.showChips(a),
      usage: (s) => { this.usage.textContent = s; },
      working: (s) => this.showWorking(s),
      turnID: () => this.started(),
    });
    const files = replaces ? [] : this.tray.take();
    turn.user(text, files);
    this.follow.toBottom();
    const path = answer ? `${this.base}/answer` : `${this.base}/messages`;
    const body = answer ? { answer: text } : { message: text, ...this.firstOf() };
    if (replaces && !answer) body.replaces = replaces;
    const sent = await this.run(turn, (onEvent, signal) => this.api.stream(path, body, onEvent, signal));
    if (replaces) return; // resend reads the transcript again
    if (sent === 'refused') {
      // As before the message: the question still waits, the chips stay,
      // the files wait in the composer.
      this.tray.restore(files);
      this.extras.prepend(...before.extras);
      this.paused = before.paused;
      this.label.textContent = this.paused ? t('chat.yourAnswer') : t('chat.message');
      if (this.fresh) await this.uncreate();
      if (this.refusal) this.status.append(this.refusal);
      this.refusal = null;
      return;
    }
    if (!this.conv.title) await this.refreshTitle();
    await this.refreshTurns();
  }

  // started runs when the turn's first event arrives: a new chat's
  // conversation now holds a message, so it becomes a conversation like
  // any other (its address, the list, export and the inspector).
  started() {
    if (!this.fresh) return;
    this.fresh = false;
    this.landing?.remove();
    this.landing = null;
    this.agentSelect = null;
    replace(this.composerLeft, this.attachSlot, this.inspectDraftButton(), this.modelSlot);
    this.showActions();
    this.opts.created?.(this.conv);
  }

  // run streams a turn: first(onEvent, signal) starts it, and a stream
  // that breaks once the turn has started is read on (resumeTurn). It
  // resolves "refused" when the turn never started (the message is then
  // back in the composer), else "ran".
  async run(turn, first) {
    this.turn = turn;
    this.busy(true);
    turn.on.working('thinking');
    const seen = turn.seen ?? (turn.seen = { id: 0, ended: false });
    const onEvent = (ev, id) => {
      if (/^\d+$/.test(id)) seen.id = Number(id);
      if (ev.type === 'done' || ev.type === 'error') seen.ended = true;
      turn.event(ev);
    };
    let outcome = 'ran';
    try {
      if (first) {
        try {
          await first(onEvent, turn.abort.signal);
        } catch (err) {
          if (!turn.id || turn.abort.signal.aborted) throw err;
        }
      }
      await this.resumeTurn(turn, onEvent);
      turn.finish();
    } catch (err) {
      outcome = this.failed(turn, err);
    } finally {
      this.turn = null;
      this.busy(false);
      this.input.focus({ preventScroll: true });
    }
    return outcome;
  }

  // resumeTurn reads the rest of a turn whose stream broke (a dropped
  // connection, a server restarting behind a load balancer) from the last
  // event shown (GET …/events?after=), a few times, until its done or
  // error: the turn goes on on the server meanwhile.
  async resumeTurn(turn, onEvent) {
    const seen = turn.seen;
    const signal = turn.abort.signal;
    for (let tries = 0; !seen.ended && turn.id && !signal.aborted; tries++) {
      if (tries === 3) throw new ApiError(0, 'lost_turn', t('chat.lostTurn'));
      try {
        const more = await this.api.follow(`${this.base}/events?turn=${enc(turn.id)}&after=${seen.id}`, onEvent, signal);
        if (!more) seen.ended = true;
      } catch (err) {
        if (signal.aborted) throw err;
        // A refusal (4xx) will not change by asking again; a lost
        // connection or a server restarting (5xx) may.
        if (err instanceof ApiError && err.status >= 400 && err.status < 500) throw err;
      }
    }
  }

  // failed shows how a turn's request failed and says whether it ran.
  failed(turn, err) {
    if (turn.abort.signal.aborted) {
      turn.finish('cancelled');
      return 'ran';
    }
    if (!turn.id) {
      // Nothing of the turn exists on the server: the message goes back.
      turn.retract();
      this.input.value = this.input.value ? `${turn.userText()}\n${this.input.value}` : turn.userText();
      // Retry where asking again may work: no connection, or a server
      // failing; a refusal would only be refused again.
      const again = err.offline || err.status >= 500 ? () => this.form.requestSubmit() : null;
      const box = errorBox(err, err.offline ? t('chat.offline') : t('chat.refused'), again);
      // A new chat's reason shows once its conversation is deleted again
      // (send), so that nothing is stored when it is read.
      if (this.fresh) this.refusal = box;
      else this.status.append(box);
      if (isNoModel(err.message) && !this.notice) this.extras.append(noModelHelp(this.fresh ? null : this.conv?.id, turn.userText()));
      if (this.fresh && this.landing) this.landing.hidden = false;
      return 'refused';
    }
    if (err instanceof ApiError && err.offline) {
      turn.lost(t('chat.lostTurn'), (item) => {
        if (this.turn) return; // another turn runs: this one has ended
        item.remove();
        this.run(turn, null);
      });
      return 'ran';
    }
    turn.fail(err.message);
    if (turn.noModel && !this.notice) this.extras.append(noModelHelp(this.conv.id, turn.userText()));
    return 'ran';
  }

  // create names a new chat's conversation, for the agent picked: an id
  // of the page's making, stored by the server with the first message
  // (firstOf), so nothing is sent yet.
  async create() {
    const agent = this.agentSelect?.value;
    if (!agent) return false;
    const model = this.modelSelect && this.modelSelect.value !== this.modelDefault ? this.modelSelect.value : '';
    const now = new Date().toISOString(); // as the list dates it until it reloads
    this.conv = { id: newID(), agent, model, title: '', created_at: now, updated_at: now };
    this.modelSaved = model || this.modelDefault;
    return true;
  }

  // firstOf is what a new chat's first message adds to its body: the
  // agent, and the model picked when it is not the agent's own.
  firstOf() {
    if (!this.fresh) return {};
    return this.conv.model ? { agent: this.conv.agent, model: this.conv.model } : { agent: this.conv.agent };
  }

  // uncreate forgets a new chat's conversation when its first message was
  // refused: the server stored nothing.
  async uncreate() {
    this.conv = null;
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
    this.rename(c.title);
  }

  // rename shows a new title.
  rename(title) {
    this.conv.title = title;
    this.title.textContent = this.heading();
    this.opts.titled?.(this.conv);
  }

  busy(on) {
    this.sendButton.disabled = on;
    this.cancelButton.hidden = !on;
    if (this.modelSelect) this.modelSelect.disabled = on;
    this.log.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  // cancel asks the server to stop the turn (it answers every pending tool
  // call and ends the stream); when that fails, the page stops reading
  // the stream (the turn goes on on the server, within its limits).
  async cancel() {
    const turn = this.turn;
    if (!turn) return;
    turn.cancelling = true;
    this.cancelButton.disabled = true;
    try {
      await this.api.post(`${this.base}/cancel`);
    } catch {
      turn.abort.abort();
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

// listFiles reads a conversation's files (GET …/attachments); null when
// the server cannot say (no files are shown then).
export async function listFiles(api, id) {
  try {
    return (await api.get(`/api/conversations/${enc(id)}/attachments`))?.attachments ?? [];
  } catch {
    return null;
  }
}
