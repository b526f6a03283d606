// Artifacts in the web chat (docs/artifacts.md, "In the web chat"): the
// side panel beside the conversation that shows one artifact's saved
// version, the "Open artifact" action on the cards of the tools that
// write one, and the header's "Artifacts (n)" menu.
//
// The panel shows what the person may see, saved versions only (a draft
// the agent has not checked is described, never shown): HTML and SVG in
// an <iframe sandbox="allow-scripts"> (no allow-same-origin: an opaque
// origin that reaches neither this page nor the API) framing the API's
// …/content route, which sandboxes the document again with its own CSP;
// Markdown through markdown.js; CSV as a table of at most MAX_CSV_ROWS
// rows; code and Mermaid as a code block (Mermaid as its source: no
// diagram library is vendored). Its header has the title, the kind,
// "Version N of M", a version picker, Copy (the shown version's text),
// Download and Close; Escape closes it too. Below 64rem it is a
// full-width overlay, with the rest of the chat inert behind it.
//
// One chat page holds one panel at a time (the active one): the tool
// cards of the transcript and of a running turn reach it through
// artifactCard.
import { h, when, errorBox, replace, menu } from './dom.js';
import { t, tn, formatNumber } from './i18n.js';
import { markdown, codeView } from './markdown.js';
import { copyButton } from './messages.js';

const enc = encodeURIComponent;

// MAX_CSV_ROWS bounds the data rows a CSV table shows (the rest are
// counted, not shown).
export const MAX_CSV_ROWS = 500;

// WRITES are the tools whose result names the artifact they wrote.
const WRITES = new Set(['create_artifact', 'rewrite_artifact', 'update_artifact', 'save_artifact']);

// RESULT reads a write's result (builtin/artifacts' state): the verb, the
// id, the title as Go quotes it, the kind (and a code artifact's
// language), then a draft's revision (and the version the person still
// sees) or the version saved.
const RESULT = /^(?:Created|Rewrote|Updated|Saved) artifact (art_[^\s"]+) ("(?:[^"\\]|\\.)*") \((markdown|html|svg|csv|code|mermaid)(?:, [^)]*)?\): (?:draft \d+[^]*?(?:The user still sees version (\d+)\.)?|saved as version (\d+))/;

// artifactRef reads what a write tool's result says of its artifact: {id,
// title, kind, version} (version 0: only a first draft, nothing to show
// yet); null for any other text.
export function artifactRef(content) {
  const m = RESULT.exec(String(content ?? ''));
  if (!m) return null;
  let title;
  try {
    title = JSON.parse(m[2]);
  } catch {
    title = m[2].slice(1, -1); // a Go escape JSON lacks: the quoted text as it is
  }
  return { id: m[1], title, kind: m[3], version: Number(m[5] ?? m[4] ?? 0) };
}

// kindName is a kind's name for people.
function kindName(kind) {
  const names = {
    markdown: () => t('art.kindMarkdown'), html: () => t('art.kindHTML'), svg: () => t('art.kindSVG'),
    csv: () => t('art.kindCSV'), code: () => t('art.kindCode'), mermaid: () => t('art.kindMermaid'),
  };
  return names[kind]?.() ?? kind;
}

// changeName is a version's change for people.
function changeName(change) {
  const names = { create: () => t('art.created'), rewrite: () => t('art.rewritten'), update: () => t('art.updated') };
  return names[change]?.() ?? change;
}

// parseCSV reads CSV text (RFC 4180: fields separated by commas, records
// by CRLF, LF or CR; a field in double quotes may hold commas, line
// breaks and doubled quotes; a quote inside an unquoted field is text; a
// byte-order mark and empty lines are skipped) and returns rows, its
// first keep records, and total, how many there are.
export function parseCSV(text, keep) {
  const s = String(text ?? '');
  const rows = [];
  let total = 0;
  let row = [];
  let field = '';
  let quoted = false; // inside a quoted field
  let i = s.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    if (row.length > 1 || row[0] !== '') {
      if (rows.length < keep) rows.push(row);
      total++;
    }
    row = [];
  };
  while (i < s.length) {
    const c = s[i];
    if (quoted) {
      const close = s.indexOf('"', i);
      if (close < 0) {
        field += s.slice(i); // an unclosed quote runs to the end
        i = s.length;
      } else if (s[close + 1] === '"') {
        field += s.slice(i, close + 1);
        i = close + 2;
      } else {
        field += s.slice(i, close);
        quoted = false;
        i = close + 1;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
      i++;
    } else if (c === ',') {
      endField();
      i++;
    } else if (c === '\n' || c === '\r') {
      endRow();
      i += c === '\r' && s[i + 1] === '\n' ? 2 : 1;
    } else {
      let j = i;
      while (j < s.length && s[j] !== ',' && s[j] !== '\n' && s[j] !== '\r') j++;
      field += s.slice(i, j);
      i = j;
    }
  }
  if (field !== '' || row.length || quoted) endRow();
  return { rows, total };
}

// csvTable shows CSV text as a table: its first record as the header,
// at most MAX_CSV_ROWS data rows, and a note of how many more there are.
function csvTable(text, caption) {
  const { rows, total } = parseCSV(text, MAX_CSV_ROWS + 1);
  if (!rows.length) return [h('p', { class: 'muted' }, t('art.csvEmpty'))];
  const [head, ...body] = rows;
  const cols = Math.max(...rows.map((r) => r.length));
  const cells = (r, tag) => Array.from({ length: cols }, (_, k) => h(tag, tag === 'th' ? { scope: 'col' } : null, r[k] ?? ''));
  const more = total - 1 - body.length;
  return [
    h('div', { class: 'table-wrap artifact-table', tabindex: '0' }, h('table', null,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, cells(head, 'th'))),
      h('tbody', null, body.map((r) => h('tr', null, cells(r, 'td')))))),
    h('p', { class: 'muted small csv-count', id: 'artifact-rows' }, more > 0
      ? t('art.rowsCapped', { shown: formatNumber(body.length), total: formatNumber(total - 1) })
      : tn('art.rows', body.length)),
  ];
}

// active is the chat page's panel; known, once the panel has listed the
// conversation's artifacts, holds each by id; slots are the cards'
// actions on screen.
let active = null;
let slots = [];

// artifactCard adds the artifact's action to the card of a write tool's
// call (el) once its result r is known: "Open artifact" naming the title,
// or, while the artifact has only a draft, that the agent is still
// checking it. live: the result just came in a running turn, so the
// panel refreshes what it shows of that artifact.
export function artifactCard(el, name, r, live) {
  if (!WRITES.has(name) || r?.is_error) return;
  const ref = artifactRef(r?.content);
  if (!ref) return;
  const slot = { ref, el: h('div', { class: 'artifact-action', 'data-artifact': ref.id }) };
  el.append(slot.el);
  slots.push(slot);
  fill(slot);
  if (live) active?.changed(ref);
}

// fill shows a card's action as the artifact now stands: as the panel's
// list knows it, else as the card's own result said.
function fill(slot) {
  const known = active?.known;
  const a = known ? known.get(slot.ref.id) : null;
  if (known && !a) {
    replace(slot.el, h('p', { class: 'muted small' }, t('art.gone', { title: slot.ref.title })));
    return;
  }
  const title = a?.title ?? slot.ref.title;
  const version = Math.max(a?.version ?? 0, slot.ref.version);
  if (!version) {
    replace(slot.el, h('p', { class: 'artifact-checking small' }, t('art.checking', { title })));
    return;
  }
  const label = t('art.open', { title });
  const had = slot.el.querySelector('.artifact-open');
  if (had) {
    // The same button, so that focus on it (and the panel's way back to
    // it) stays.
    if (had.textContent !== label) had.textContent = label;
    return;
  }
  replace(slot.el, h('button', { type: 'button', class: 'secondary small artifact-open',
    onclick: (e) => active?.open(slot.ref.id, { from: e.currentTarget }) }, label));
}

// refill brings every card's action on screen up to date.
// A card off the page is forgotten: refill runs after an answer from the
// API, so a transcript's cards, built and added at once, are on the page
// by then.
function refill() {
  slots = slots.filter((s) => s.el.isConnected);
  for (const s of slots) fill(s);
}

// ArtifactPanel is the side panel (el, the chat's <aside>) and the
// header's menu (button). conversation() is the conversation's id, or
// null while a new chat has none.
export class ArtifactPanel {
  constructor(api, el, conversation) {
    this.api = api;
    this.el = el;
    this.conversation = conversation;
    this.known = null; // id → the artifact as listed, once listed
    this.art = null; // the artifact shown, with its versions
    this.shown = null; // the version shown: { version, title, content }
    this.follow = true; // show the newest version when it changes
    this.returnTo = null;
    // Each list and each artifact asked for is numbered: only the
    // newest answer is shown.
    this.listAsked = 0;
    this.loadAsked = 0;
    this.narrow = matchMedia('(max-width: 64rem)');
    this.narrow.addEventListener('change', () => this.inertBehind());
    this.el.classList.add('artifacts');
    this.el.setAttribute('aria-labelledby', 'artifact-h');
    this.el.removeAttribute('aria-label');
    this.el.hidden = true;
    this.el.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !e.defaultPrevented && !e.target.closest('details[open]')) {
        e.preventDefault();
        this.close();
      }
    });
    this.items = h('div', { class: 'artifact-items' });
    this.button = menu('artifacts-menu', { class: 'button small' }, h('span', { class: 'artifacts-count' }), this.items);
    this.button.id = 'artifacts-button';
    this.button.hidden = true;
    active = this;
  }

  base() {
    return `/api/conversations/${enc(this.conversation())}/artifacts`;
  }

  // refresh lists the conversation's artifacts again: the header's menu
  // and the cards follow. A failure keeps what was known.
  async refresh() {
    if (!this.conversation()) return;
    const asked = ++this.listAsked;
    let list;
    try {
      list = (await this.api.get(this.base()))?.artifacts ?? [];
    } catch {
      return;
    }
    if (asked !== this.listAsked) return; // a later answer is (or will be) shown
    this.known = new Map(list.map((a) => [a.id, a]));
    this.showMenu(list);
    if (active === this) refill();
  }

  // showMenu offers each artifact in the header's menu, which shows when
  // there is one.
  showMenu(list) {
    this.button.hidden = !list.length;
    this.button.querySelector('.artifacts-count').textContent = tn('art.list', list.length);
    replace(this.items, list.map((a) => h('button', { type: 'button', 'data-artifact': a.id,
      onclick: () => this.open(a.id, { from: this.button.querySelector('summary') }) },
    h('span', { class: 'artifact-item-title' }, a.title), ' ',
    h('span', { class: 'muted small' }, a.version ? kindName(a.kind) : t('art.itemChecking', { kind: kindName(a.kind) })))));
  }

  // changed is told of a write in the running turn: the list is read
  // again, and the artifact shown, when it is this one, shows its newest
  // version (unless an older one was picked).
  async changed(ref) {
    await this.refresh();
    if (this.el.hidden || this.art?.id !== ref.id) return;
    const now = this.known?.get(ref.id);
    if (now && now.version === this.art.version && now.title === this.art.title) {
      // Only a draft changed: the version shown stays (its frame is
      // not loaded again); the header says so.
      this.art.draft = now.draft;
      const focused = this.el.contains(document.activeElement) ? document.activeElement.id : '';
      this.el.querySelector('.artifact-head')?.replaceWith(this.head(this.art));
      if (focused) this.el.querySelector(`#${CSS.escape(focused)}`)?.focus();
      return;
    }
    await this.load(ref.id, this.follow ? 0 : this.shown?.version ?? 0);
  }

  // open shows an artifact, its newest saved version or version; focus
  // moves to the panel's heading, and back to from (or what had it) when
  // the panel closes.
  async open(id, { version = 0, from } = {}) {
    if (this.el.hidden || !this.el.contains(document.activeElement)) this.returnTo = from ?? document.activeElement;
    this.follow = !version;
    this.el.hidden = false;
    this.inertBehind();
    await this.load(id, version);
    this.el.querySelector('#artifact-h')?.focus();
  }

  // close hides the panel and gives focus back.
  close() {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.inertBehind();
    replace(this.el);
    this.art = this.shown = null;
    const back = this.returnTo;
    this.returnTo = null;
    if (back?.isConnected && back.checkVisibility?.() !== false) back.focus();
    else document.getElementById('message')?.focus();
  }

  // inertBehind makes the rest of the chat inert while the panel covers
  // it (narrow screens), and as it was once it no longer does.
  inertBehind() {
    const cover = !this.el.hidden && this.narrow.matches;
    if (cover === Boolean(this.covered)) return;
    const behind = [...(this.el.parentElement?.children ?? [])].filter((x) => x !== this.el && x.matches('.thread, .convs'));
    if (cover) {
      this.covered = behind.map((x) => [x, x.inert]);
      for (const x of behind) x.inert = true;
    } else {
      for (const [x, was] of this.covered) x.inert = was;
      this.covered = null;
    }
  }

  // load reads an artifact with its history and the version to show
  // (0: the newest saved), and shows it.
  async load(id, version) {
    const asked = ++this.loadAsked;
    let art;
    let shown;
    try {
      art = await this.api.get(`${this.base()}/${enc(id)}`);
      const newest = art.version;
      if (version && version !== newest) {
        const v = await this.api.get(`${this.base()}/${enc(id)}/versions/${version}`);
        shown = { version: v.version, title: v.title, content: v.content ?? '' };
      } else if (newest) {
        const v = art.versions?.find((x) => x.version === newest);
        shown = { version: newest, title: v?.title ?? art.title, content: art.content ?? '' };
      }
    } catch (err) {
      if (this.el.hidden || asked !== this.loadAsked) return;
      replace(this.el, this.head(null), h('div', { class: 'artifact-body' }, errorBox(err, t('art.failed'))));
      return;
    }
    if (this.el.hidden || asked !== this.loadAsked) return; // closed, or another asked for since
    this.art = art;
    this.shown = shown ?? null;
    const focused = this.el.contains(document.activeElement) ? document.activeElement.id : '';
    replace(this.el, this.head(art), this.body(art));
    if (focused) this.el.querySelector(`#${CSS.escape(focused)}`)?.focus();
  }

  // contentURL is the /content route of the version shown.
  contentURL(download) {
    const q = new URLSearchParams({ version: String(this.shown.version) });
    if (download) q.set('download', 'true');
    return `${this.base()}/${enc(this.art.id)}/content?${q}`;
  }

  // head is the panel's header: title, kind, version and its picker,
  // Copy, Download and Close.
  head(art) {
    const close = h('button', { type: 'button', class: 'artifact-close', id: 'artifact-close', 'aria-label': t('art.close'),
      onclick: () => this.close() }, h('span', { 'aria-hidden': 'true' }, '×'));
    const title = h('h2', { id: 'artifact-h', tabindex: '-1' }, this.shown?.title ?? art?.title ?? t('chat.artifacts'));
    if (!art) return h('div', { class: 'artifact-head' }, h('div', { class: 'artifact-title-row' }, title, close));
    const meta = h('p', { class: 'artifact-meta' }, h('span', { class: 'badge', id: 'artifact-kind' },
      art.kind === 'code' && art.language ? `${kindName(art.kind)} · ${art.language}` : kindName(art.kind)), ' ',
    this.shown ? h('span', { id: 'artifact-version' }, t('art.version', { n: formatNumber(this.shown.version), total: formatNumber(art.version) })) : null);
    const tools = [];
    if (this.shown) {
      const versions = [...(art.versions ?? [])].reverse();
      const pick = h('select', { id: 'artifact-pick', class: 'narrow',
        onchange: () => {
          const v = Number(pick.value);
          this.follow = v === art.version;
          this.load(art.id, v);
        } },
      versions.map((v) => h('option', { value: String(v.version), selected: v.version === this.shown.version },
        t('art.option', { n: formatNumber(v.version), change: changeName(v.change), when: when(v.created_at) }))));
      tools.push(h('span', { class: 'artifact-pick' }, h('label', { for: 'artifact-pick', class: 'inline' }, t('art.pick')), pick),
        h('span', { class: 'artifact-actions' }, copyButton(() => this.shown?.content ?? '', t('art.copy')),
          h('a', { class: 'button small', id: 'artifact-download', href: this.contentURL(true), download: '',
            'aria-label': t('art.downloadLabel', { n: formatNumber(this.shown.version) }) }, t('art.download'))));
    }
    return h('div', { class: 'artifact-head' },
      h('div', { class: 'artifact-title-row' }, title, close), meta,
      tools.length ? h('div', { class: 'artifact-tools' }, tools) : null,
      art.draft && this.shown ? h('p', { class: 'muted small', id: 'artifact-draft' }, t('art.draftNote')) : null);
  }

  // body renders the version shown by its kind.
  body(art) {
    const el = h('div', { class: `artifact-body kind-${art.kind}`, id: 'artifact-body' });
    const v = this.shown;
    if (!v) {
      el.append(h('p', { class: 'artifact-checking' }, t('art.onlyDraft')));
      return el;
    }
    switch (art.kind) {
      case 'html':
      case 'svg':
        // sandbox before src: the frame never loads unsandboxed.
        el.append(h('iframe', { sandbox: 'allow-scripts', src: this.contentURL(false), class: 'artifact-frame', id: 'artifact-frame',
          referrerpolicy: 'no-referrer', title: t('art.frame', { title: v.title, n: formatNumber(v.version) }) }));
        break;
      case 'markdown':
        el.append(h('div', { class: 'md artifact-md' }, markdown(v.content)));
        break;
      case 'csv':
        el.append(...csvTable(v.content, v.title));
        break;
      case 'mermaid':
        el.append(h('p', { class: 'muted small' }, t('art.mermaid')), h('div', { class: 'md' }, codeView(v.content, 'mermaid')));
        break;
      default:
        el.append(h('div', { class: 'md' }, codeView(v.content, art.language ?? '')));
    }
    return el;
  }
}
