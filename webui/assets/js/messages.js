// One entry of a transcript on screen: a message (copy button, long ones
// collapsed behind "Show more") and a tool call (one compact line that
// opens to its arguments and result). Text from the model, tools and
// users goes in as text nodes only (the agent's through markdown.js).
import { h, icon, pretty, replace } from './dom.js';
import { t, locale } from './i18n.js';
import { markdown } from './markdown.js';

// messageItem shows one message: the agent's as Markdown, anyone else's
// as plain text, with a copy button for its raw text (opts.source()
// when given, for an answer still streaming in; else text). opts.extra
// goes in the message's action row. Long messages are collapsed.
export function messageItem(role, text, opts = {}) {
  const who = { user: t('msg.you'), assistant: t('msg.agent'), thought: t('msg.thought') }[role] ?? role;
  const body = role === 'assistant' ? h('div', { class: 'text md' }, markdown(text)) : h('div', { class: 'text' }, text);
  const actions = h('div', { class: 'msg-actions' }, copyButton(opts.source ?? (() => text)), opts.extra);
  const li = h('li', { class: `msg ${role}` }, h('span', { class: 'who' }, who), body, actions);
  if (opts.collapse !== false) collapseLong(li, body, actions, text);
  return li;
}

// copyButton copies what source() returns and says whether it could.
export function copyButton(source, label = t('msg.copy')) {
  const status = h('span', { class: 'copy-status', role: 'status' });
  let timer = 0;
  const button = h('button', {
    type: 'button', class: 'copy', 'aria-label': label,
    onclick: async () => {
      const ok = await copyText(source());
      status.textContent = ok ? t('msg.copied') : t('msg.copyFailed');
      button.classList.toggle('done', ok);
      clearTimeout(timer);
      timer = setTimeout(() => {
        status.textContent = '';
        button.classList.remove('done');
      }, 2500);
    },
  }, icon('copy'), h('span', { class: 'copy-label' }, t('msg.copyShort')));
  return h('span', { class: 'copy-wrap' }, button, status);
}

// copyText puts text on the clipboard: the Clipboard API, else a hidden
// text box copied with execCommand (a page over plain http elsewhere than
// localhost has no Clipboard API). It resolves whether either worked.
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const box = h('textarea', { class: 'clip', readonly: true, 'aria-hidden': 'true', tabindex: '-1' });
    box.value = text;
    document.body.append(box);
    box.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    box.remove();
    return ok;
  }
}

// A message is a candidate for collapsing above these; it is collapsed
// only if it then overflows its box (measured, so a long single line on a
// wide screen is not).
const longChars = 1200;
const longLines = 16;

// sizes watches every collapsible message's body; checks holds each
// one's re-check.
const checks = new WeakMap();
const sizes = typeof ResizeObserver === 'function'
  ? new ResizeObserver((entries) => entries.forEach((e) => checks.get(e.target)?.()))
  : null;

// collapseLong limits a long message's height and offers "Show more" /
// "Show less" (a button with aria-expanded) when its text overflows.
function collapseLong(li, body, actions, text) {
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0 && lines <= longLines; i = text.indexOf('\n', i + 1)) lines++;
  if (!sizes || (text.length <= longChars && lines <= longLines)) return;
  let open = false;
  body.id ||= `msg-${Math.random().toString(36).slice(2, 10)}`;
  const more = h('button', { type: 'button', class: 'link more', 'aria-expanded': 'false', 'aria-controls': body.id, hidden: true });
  const show = () => {
    more.textContent = open ? t('msg.showLess') : t('msg.showMore');
    more.setAttribute('aria-expanded', String(open));
    body.classList.toggle('clamp', !open);
    check();
  };
  let shown = false;
  const check = () => {
    if (!body.isConnected) {
      if (shown) {
        // Off the page (a re-render): watch it no more.
        sizes.unobserve(body);
        checks.delete(body);
      }
      return;
    }
    shown = true;
    const over = !open && body.scrollHeight > body.clientHeight + 1;
    li.classList.toggle('overflowing', over);
    more.hidden = !over && !open;
  };
  more.addEventListener('click', () => {
    open = !open;
    show();
    if (!open) li.scrollIntoView({ block: 'nearest' });
  });
  checks.set(body, check);
  sizes.observe(body);
  actions.prepend(more);
  show();
}

// The icon and the word for each state of a tool call: the word says it
// all (the icon and the colour only repeat it).
const STATES = {
  running: { icon: '…', word: () => t('tool.running') },
  done: { icon: '✓', word: () => t('tool.done') },
  error: { icon: '✕', word: () => t('tool.failed') },
  refused: { icon: '⊘', word: () => t('tool.refused') },
  cancelled: { icon: '■', word: () => t('tool.cancelled') },
  unanswered: { icon: '?', word: () => t('tool.noResult') },
};

// resultState tells a result's state from what the loop and dispatch
// write: a call they refused to run ("Not run: …", a tool not in the
// turn's toolset) or one the turn's cancellation left unrun is not a tool
// failure.
export function resultState(r) {
  if (!r.is_error) return 'done';
  const c = String(r.content ?? '');
  if (c.startsWith('Not run: ') || /^Tool ".*" is not available\.$/.test(c)) return 'refused';
  if (c.startsWith('cancelled: ')) return 'cancelled';
  return 'error';
}

// argSummary is a call's arguments in one short line: an object's first
// fields as name: value, anything else as its text.
export function argSummary(args, max = 80) {
  let v = args;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      // not JSON: the text itself
    }
  }
  let s;
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    s = Object.entries(v).map(([k, x]) => `${k}: ${typeof x === 'string' ? x : JSON.stringify(x)}`).join(', ');
  } else {
    s = v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  }
  s = s.replace(/\s+/g, ' ').trim();
  return [...s].length > max ? [...s].slice(0, max - 1).join('') + '…' : s;
}

// duration formats milliseconds for people ("0.4 s", "12 s", "2 min").
export function duration(ms) {
  if (!(ms >= 0)) return '';
  const unit = (n, u, digits) => new Intl.NumberFormat(locale(), { style: 'unit', unit: u, unitDisplay: 'short', maximumFractionDigits: digits }).format(n);
  if (ms < 60000) return unit(ms / 1000, 'second', ms < 10000 ? 1 : 0);
  return unit(Math.round(ms / 60000), 'minute', 0);
}

// FILES_BLOCK starts the list of files a tool wrote to the person's
// workspace (run_code's result, builtin/code's Output.ModelText): one
// "- path (size, media type)" line each.
const FILES_BLOCK = 'Files written to the workspace:\n';
const FILE_LINE = /^- (.+) \(([^,()]+), (image\/(?:png|jpeg|gif|webp|svg\+xml))\)$/;

// savedImages lists the images a result says were written to the
// workspace, at most 4 (a chart a script saved), by path.
export function savedImages(content) {
  const c = String(content ?? '');
  const at = c.lastIndexOf(FILES_BLOCK);
  if (at < 0) return [];
  const out = [];
  for (const line of c.slice(at + FILES_BLOCK.length).split('\n')) {
    const m = FILE_LINE.exec(line);
    if (!m) break;
    if (out.length < 4) out.push(m[1]);
  }
  return out;
}

// imageFigure shows an image of the person's workspace under its tool
// card, read through GET /api/workspace/file (a file since deleted or
// replaced shows as it is now, or says it is gone).
function imageFigure(path) {
  const caption = h('figcaption', null, path);
  const img = h('img', { src: `/api/workspace/file?path=${encodeURIComponent(path)}`, alt: t('tool.savedImage', { path }), loading: 'lazy' });
  img.addEventListener('error', () => {
    img.remove();
    caption.textContent = t('tool.imageGone', { path });
  });
  return h('figure', { class: 'tool-figure' }, img, caption);
}

// toolCard shows one tool call as a line (icon, tool, argument summary,
// state, duration) that opens to its arguments and, once known, its
// result. args undefined: not known (a result without its call).
export function toolCard(name, args, id) {
  const icon = h('span', { class: 'tool-icon', 'aria-hidden': 'true' });
  const badge = h('span', { class: 'badge' });
  const took = h('span', { class: 'tool-duration' });
  const body = h('div', { class: 'tool-result' }, h('p', { class: 'label' }, t('tool.result')), h('p', { class: 'muted' }, t('tool.runningLong')));
  const el = h('li', { class: 'tool-card running', 'data-call-id': id ?? '' },
    h('details', null,
      h('summary', { class: 'tool-head' }, icon,
        h('span', { class: 'kind' }, t('tool.call')), h('span', { class: 'tool-name' }, name ?? '?'),
        h('span', { class: 'tool-args' }, args === undefined ? '' : argSummary(args)), badge, took),
      h('div', { class: 'tool-body' },
        args === undefined ? null : [h('p', { class: 'label' }, t('tool.arguments')), h('pre', { class: 'args', tabindex: '0' }, pretty(args) || '{}')],
        body)));
  const state = (s) => {
    for (const k of Object.keys(STATES)) el.classList.remove(k);
    el.classList.add(s);
    el.classList.toggle('error', s === 'error' || s === 'refused');
    icon.textContent = STATES[s].icon;
    badge.textContent = STATES[s].word();
  };
  state('running');
  let done = false;
  return {
    el,
    // result shows the call's result; ms is how long it took, if known.
    result(r, ms) {
      done = true;
      const s = resultState(r);
      state(s);
      took.textContent = duration(ms);
      replace(body, h('p', { class: 'label' }, s === 'done' ? t('tool.result') : s === 'refused' ? t('tool.refusal') : t('tool.error')),
        h('pre', { class: 'result', tabindex: '0' }, pretty(r.content ?? '')),
        r.ref ? h('p', { class: 'muted' }, t('tool.shortened', { ref: r.ref })) : null);
      if (s === 'done') el.append(...savedImages(r.content).map(imageFigure));
    },
    unanswered() {
      if (done) return;
      done = true;
      state('unanswered');
      replace(body, h('p', { class: 'muted' }, t('tool.unanswered')));
    },
  };
}
