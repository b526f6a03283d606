// Markdown for the agent's answers, by maintained libraries: markdown-it
// parses (raw HTML off: tags are text), this module builds the elements
// of its tokens with text nodes only, highlight.js colours fenced code,
// and DOMPurify then holds the nodes to an allowlist of elements and
// attributes, as a second line of defence. Only http, https and mailto
// URLs become links (never this server's /login), and a link's title
// shows where it goes. A code block gets a header with its language and a
// button that copies the code. markdownParts lets an answer that streams
// in be rendered incrementally; patchBlocks keeps the nodes that did not
// change.
//
// Markdown: CommonMark with GitHub's tables and ~~strikethrough~~, bare
// http(s) URLs as links, and a single newline as a line break. Headings #
// to ###### become h3 to h6, below the page's h1 and h2. Left out, so they
// stay text: HTML, images (![alt](url) is "!" and a link: nothing is
// loaded), indented code (an indented line is text), and link reference
// definitions (a definition at the end would change links rendered
// before it while the answer streams in).
import MarkdownIt from '../vendor/markdown-it/markdown-it.esm.min.mjs';
import hljs from '../vendor/highlight.js/highlight.min.js';
import DOMPurify from '../vendor/dompurify/purify.es.mjs';
import { h } from './dom.js';

// strings are the words this module shows, in one place for the page's
// catalog of translations.
export const strings = {
  copy: 'Copy',
  copyCode: 'Copy code',
  copied: 'Copied',
  copyByHand: 'Selected: press Ctrl+C or ⌘C',
};

// maxLevel bounds how deep lists and blockquotes nest (in markdown-it's
// token levels: a quote is one, a list two); deeper, the lines are a
// paragraph of their text, markers included. markdown-it itself would
// drop everything past its maxNesting.
const maxLevel = 16;
// maxHighlight bounds the code highlight.js colours (in UTF-16 units);
// a longer block is shown plain.
const maxHighlight = 20_000;

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const pageOrigin = globalThis.location?.origin;
const LINK_REL = 'noopener noreferrer nofollow';
const LANG = /^[\w.+#-]{1,32}$/;
// HLJS_CLASS is a class highlight.js gives a span: hljs-keyword, or a
// sub-scope such as function_.
const HLJS_CLASS = /^(?:hljs-[a-z_-]+|[a-z]+_+)$/;

const md = new MarkdownIt('default', {
  html: false,
  breaks: true,
  linkify: true,
  typographer: false,
  highlight: null,
});
md.disable(['image', 'code', 'reference']);
// Bare URLs only with their scheme, http, https or mailto: linkify-it's
// ftp: and //host are dropped, and no "example.com" is guessed at.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false }).add('ftp:', null).add('//', null);
md.validateLink = (url) => safeHref(url) !== null;
md.block.ruler.before('table', 'quiver_deep', deepText);

// markdown renders src as an array of block nodes.
export function markdown(src) {
  return render(md.parse(String(src ?? ''), {}));
}

// codeView renders code as a fenced block of language lang renders: in
// the code block frame with its language and copy button, coloured when
// highlight.js knows the language and the code is short enough, else
// plain. The code is shown as it is (no Markdown is read in it).
export function codeView(code, lang = '') {
  const root = purify.sanitize(h('div', null, fence({ info: LANG.test(lang) ? lang : '', content: String(code ?? '') + '\n' })));
  for (const pre of root.querySelectorAll('pre')) codeBlock(pre);
  return [...root.childNodes];
}

// markdownParts renders src as markdown(src) does, in two parts, for an
// answer that streams in: head, the blocks that stay as they are whatever
// text is appended to src, and tail, the blocks after them, which more
// text may change; cut is the length of the text that head renders. head
// ends before the last top-level block that follows a blank line and whose
// first line is complete (a blank line ends a paragraph, table or quote;
// that complete line tells whether a list goes on; a fence still open is
// one block to the end). markdown(src.slice(cut)) renders the tail.
export function markdownParts(src) {
  src = String(src ?? '');
  const tokens = md.parse(src, {});
  const starts = [];
  tokens.forEach((t, i) => t.level === 0 && t.nesting !== -1 && starts.push(i));
  const lines = src.split(/\r\n?|\n/);
  const lineOf = (k) => tokens[starts[k]].map[0];
  let k = starts.length - 1;
  while (k > 0 && !(lineOf(k) < lines.length - 1 && lines[lineOf(k) - 1].trim() === '')) k--;
  if (k <= 0) return { cut: 0, head: [], tail: render(tokens) };
  const eol = /\r\n?|\n/g;
  for (let n = lineOf(k); n > 0; n--) eol.exec(src);
  return { cut: eol.lastIndex, head: render(tokens.slice(0, starts[k])), tail: render(tokens.slice(starts[k])) };
}

// patchBlocks makes parent's last nodes, old, show fresh instead, and
// returns the nodes now there: an old node equal to its fresh one stays,
// and so does a code block of the same language (its code's nodes up to
// the first that differs stay too), so that focus on its button, a
// selection and the scroll inside it survive the code growing.
export function patchBlocks(parent, old, fresh) {
  const live = fresh.map((n, k) => {
    const o = old[k];
    if (!o) {
      parent.append(n);
      return n;
    }
    if (o.isEqualNode(n) || growCode(o, n)) return o;
    o.replaceWith(n);
    return n;
  });
  for (const o of old.slice(fresh.length)) o.remove();
  return live;
}

// growCode gives code block o the code of code block n when both are of
// the same language, keeping o's nodes before the first that differs (and
// the last one, when it is text that only grew).
function growCode(o, n) {
  const code = (x) => (x.classList?.contains('code-block') ? x.querySelector('pre > code') : null);
  const [oc, nc] = [code(o), code(n)];
  if (!oc || !nc || oc.getAttribute('data-lang') !== nc.getAttribute('data-lang')) return false;
  const [was, is] = [oc.childNodes, nc.childNodes];
  let same = 0;
  while (same < was.length && same < is.length && was[same].isEqualNode(is[same])) same++;
  const [w, i] = [was[same], is[same]];
  if (w?.nodeType === Node.TEXT_NODE && i?.nodeType === Node.TEXT_NODE && same === was.length - 1 &&
    i.data.startsWith(w.data)) {
    w.appendData(i.data.slice(w.data.length)); // the last text grew: a selection in it stays
    same++;
  }
  while (oc.childNodes.length > same) oc.lastChild.remove();
  oc.append(...[...is].slice(same));
  return true;
}

// safeHref returns the URL as the page will use it, when it is an http,
// https or mailto URL; anything else (javascript:, data:, relative) is null.
// So is this server's own /login: its one-time link would sign the reader
// in as whoever the link was made for (login CSRF).
function safeHref(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(u.protocol) && !isLogin(u) ? u.href : null;
}

// isLogin tells a URL of this page's origin whose path, decoded, with its
// slashes collapsed (as the server's router cleans it) and in any case,
// starts with /login.
function isLogin(u) {
  if (u.origin !== pageOrigin) return false;
  let path = u.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // a malformed escape: the path as it is
  }
  return path.replace(/\/+/g, '/').toLowerCase().startsWith('/login');
}

// deepText is a block rule, first in line: nested maxLevel deep, each
// run of lines up to a blank one is a paragraph of its text.
function deepText(state, startLine, endLine, silent) {
  if (state.level < maxLevel || silent) return false;
  let next = startLine + 1;
  while (next < endLine && !state.isEmpty(next)) next++;
  state.line = next;
  state.push('paragraph_open', 'p', 1).map = [startLine, next];
  const inline = state.push('inline', '', 0);
  inline.content = state.getLines(startLine, next, state.blkIndent, false).trim();
  inline.map = [startLine, next];
  inline.children = [];
  state.push('paragraph_close', 'p', -1);
  return true;
}

// build makes the nodes of markdown-it's tokens, in a <div>: elements
// by the tokens' tags (headings two levels down, strikethrough as <del>,
// a table in a scrolling frame (focusable, so it scrolls from the keyboard), a cell's alignment as data-align: the page
// allows no style attribute) and text nodes for every text.
function build(tokens) {
  const root = h('div');
  const stack = [root];
  const walk = (list) => {
    for (const t of list) {
      if (t.nesting === 1 && !t.hidden) {
        const el = element(t);
        stack[stack.length - 1].append(t.type === 'table_open' ? h('div', { class: 'table-wrap', tabindex: '0' }, el) : el);
        stack.push(el);
      } else if (t.nesting === -1 && !t.hidden) {
        stack.pop();
      } else if (t.type === 'inline') {
        walk(t.children);
      } else if (t.nesting === 0) {
        stack[stack.length - 1].append(leaf(t));
      }
    }
  };
  walk(tokens);
  return root;
}

// element is the element that an opening token stands for.
function element(t) {
  switch (t.type) {
    case 'heading_open':
      return h(`h${Math.min(Number(t.tag.slice(1)) + 2, 6)}`);
    case 's_open':
      return h('del');
    case 'th_open':
    case 'td_open':
      return h(t.tag, { 'data-align': /^text-align:(left|right|center)$/.exec(t.attrGet('style') ?? '')?.[1] });
    case 'ordered_list_open':
      return h('ol', { start: t.attrGet('start') });
    case 'link_open':
      return h('a', { href: t.attrGet('href') });
    default:
      return h(t.tag);
  }
}

// leaf is the node of a token that holds no others; anything unknown is
// its text.
function leaf(t) {
  switch (t.type) {
    case 'code_inline':
      return h('code', null, t.content);
    case 'softbreak':
    case 'hardbreak':
      return h('br');
    case 'hr':
      return h('hr');
    case 'fence':
      return fence(t);
    default:
      return t.content ?? '';
  }
}

// fence renders a fenced code block: its code, without the newline before
// the closing fence, coloured when highlight.js knows the language (its
// HTML read through DOMPurify, into spans with its classes only).
function fence(t) {
  const word = md.utils.unescapeAll(t.info).trim().split(/\s/)[0];
  const lang = LANG.test(word) ? word : '';
  const code = t.content.endsWith('\n') ? t.content.slice(0, -1) : t.content;
  const known = Boolean(lang && code.length <= maxHighlight && hljs.getLanguage(lang));
  const body = known
    ? purifyHTML.sanitize(hljs.highlight(code, { language: lang, ignoreIllegals: true }).value)
    : code;
  return h('pre', { tabindex: '0' }, h('code', { 'data-lang': lang || null }, body));
}

// ALLOWED are the elements and attributes a rendered answer may have;
// DOMPurify removes the rest (keeping their text).
const ALLOWED = {
  P: [], BR: [], H3: [], H4: [], H5: [], H6: [], HR: [], BLOCKQUOTE: [],
  UL: [], OL: ['start'], LI: [], PRE: ['tabindex'], CODE: ['data-lang'], SPAN: ['class'],
  DIV: ['class', 'tabindex'], TABLE: [], THEAD: [], TBODY: [], TR: [], TH: ['data-align'], TD: ['data-align'],
  STRONG: [], EM: [], DEL: [], A: ['href'],
};
const CLASSES = { DIV: /^table-wrap$/, SPAN: HLJS_CLASS };

// attributeHook holds each attribute to ALLOWED and its value to what
// this module makes.
function attributeHook(node, data) {
  const name = data.attrName;
  const ok = ALLOWED[node.nodeName]?.includes(name) &&
    (name !== 'class' || data.attrValue.split(' ').every((c) => CLASSES[node.nodeName].test(c))) &&
    (name !== 'tabindex' || data.attrValue === '0') &&
    (name !== 'data-align' || /^(left|right|center)$/.test(data.attrValue)) &&
    (name !== 'data-lang' || LANG.test(data.attrValue)) &&
    (name !== 'start' || /^\d{1,9}$/.test(data.attrValue));
  if (!ok) data.keepAttr = false;
}
const PURIFY = {
  ALLOWED_TAGS: Object.keys(ALLOWED).map((t) => t.toLowerCase()),
  ALLOWED_ATTR: [...new Set(Object.values(ALLOWED).flat())],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  // href is the one URL: it must be http, https or mailto; the others
  // hold no URL (the hook above checks their values).
  ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
  ADD_URI_SAFE_ATTR: ['tabindex', 'data-lang', 'data-align', 'start'],
};

// sanitizer is a DOMPurify of its own with PURIFY and extra set once
// (read again at each call, the configuration would cost more than the
// sanitising).
function sanitizer(extra) {
  const p = DOMPurify(globalThis.window);
  p.addHook('uponSanitizeAttribute', attributeHook);
  p.setConfig({ ...PURIFY, ...extra });
  return p;
}
// purify cleans the nodes built, in place; purifyHTML reads
// highlight.js's HTML into nodes.
const purify = sanitizer({ IN_PLACE: true });
const purifyHTML = sanitizer({ RETURN_DOM_FRAGMENT: true });

// render renders tokens to nodes: built, held to the allowlist by
// DOMPurify, then links and code blocks finished with the page's own
// attributes and elements.
function render(tokens) {
  if (!tokens.length) return [];
  const root = purify.sanitize(build(tokens));
  for (const a of root.querySelectorAll('a')) finishLink(a);
  for (const pre of root.querySelectorAll('pre')) codeBlock(pre);
  return [...root.childNodes];
}

// finishLink opens a link in a new tab without the page as its opener or
// referrer, with its address as its title; one whose address is not safe
// (none should be left) becomes its text.
function finishLink(a) {
  const href = safeHref(a.getAttribute('href'));
  if (!href) {
    a.replaceWith(...a.childNodes);
    return;
  }
  a.setAttribute('href', href);
  a.setAttribute('rel', LINK_REL);
  a.setAttribute('target', '_blank');
  a.setAttribute('title', href);
}

// codeBlock puts a code block in a frame with a header: the language, as
// text, and a button that copies the code. The frame is highlight.js's
// .hljs, which the theme gives its background and text colour, coloured
// or not.
function codeBlock(pre) {
  const lang = pre.firstElementChild?.getAttribute('data-lang') ?? '';
  const frame = h('div', { class: 'code-block hljs' });
  pre.replaceWith(frame);
  const button = h('button', { type: 'button', class: 'code-copy', 'aria-label': strings.copyCode }, strings.copy);
  button.addEventListener('click', () => copyCode(button));
  frame.append(h('div', { class: 'code-head' }, lang ? h('span', { class: 'code-lang' }, lang) : null, button), pre);
}

// copyCode copies the code of button's block, as written: the Clipboard
// API where the page may use it, else a copy command on a hidden text
// box, else the code is selected for the reader to copy. The button says
// which for a moment.
async function copyCode(button) {
  const code = button.closest('.code-block')?.querySelector('pre > code');
  if (!code) return;
  const text = code.textContent;
  let said = strings.copied;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    if (!copyCommand(text, button)) {
      getSelection()?.selectAllChildren(code);
      said = strings.copyByHand;
    }
  }
  button.textContent = said;
  button.setAttribute('aria-label', said);
  clearTimeout(button.reset);
  button.reset = setTimeout(() => {
    button.textContent = strings.copy;
    button.setAttribute('aria-label', strings.copyCode);
  }, 2000);
}

// copyCommand copies text with the browser's copy command on a hidden text
// box, and gives focus back to the button.
function copyCommand(text, button) {
  const box = h('textarea', { class: 'copy-box', readonly: true, 'aria-hidden': 'true', tabindex: '-1' });
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
  button.focus();
  return ok;
}

// THEMES are highlight.js's colours for code, by the page's theme.
// The a11y themes' colours meet WCAG AA contrast on their backgrounds.
const THEMES = {
  light: '/assets/vendor/highlight.js/a11y-light.min.css',
  dark: '/assets/vendor/highlight.js/a11y-dark.min.css',
};

// styleSheets adds this module's style sheets to the page, once: the code
// blocks' frame, and the code's colours for the light and the dark theme.
// Those follow <html data-theme="light|dark"> when it is set, else the
// system's preference.
function styleSheets() {
  const doc = globalThis.document;
  if (!doc || doc.querySelector('link[data-code-theme]')) return;
  const links = Object.entries(THEMES).map(([theme, href]) =>
    h('link', { rel: 'stylesheet', href, 'data-code-theme': theme }));
  doc.head.append(h('link', { rel: 'stylesheet', href: '/assets/css/markdown.css' }), ...links);
  const follow = () => {
    const chosen = doc.documentElement.getAttribute('data-theme');
    for (const l of links) {
      const theme = l.getAttribute('data-code-theme');
      if (chosen === 'light' || chosen === 'dark') l.media = chosen === theme ? 'all' : 'not all';
      else l.media = theme === 'dark' ? '(prefers-color-scheme: dark)' : 'not all and (prefers-color-scheme: dark)';
    }
  };
  follow();
  new MutationObserver(follow).observe(doc.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
}

styleSheets();
