// Markdown for the agent's answers, rendered by a small parser of our own.
// It builds elements with h() and text nodes only: HTML in an answer stays
// text, and only http, https and mailto URLs become links (never this
// server's /login). What it does not know stays literal text. No step
// grows with the square of the text, and markdownParts lets an answer that
// streams in be rendered incrementally.
//
// Blocks: paragraphs (a single newline is a <br>), ATX headings (# to
// ###### as h3 to h6, below the page's h1 and h2), fenced code (``` or ~~~,
// an unclosed fence runs to the end, as while an answer streams in), bullet
// and numbered lists, blockquotes, horizontal rules and pipe tables.
// Inline: `code`, **strong**, *em* and _em_, ~~del~~, [text](url), <url>
// and bare http(s) URLs.
import { h } from './dom.js';

// markdown renders src as an array of block nodes.
export function markdown(src) {
  return blocks(linesOf(src), 0).map(block);
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
  const lines = linesOf(src);
  const starts = [];
  const bs = blocks(lines, 0, starts);
  let k = bs.length - 1;
  while (k > 0 && !(starts[k] < lines.length - 1 && blank(lines[starts[k] - 1]))) k--;
  if (k <= 0) return { cut: 0, head: [], tail: bs.map(block) };
  const eol = /\r\n?|\n/g;
  for (let n = starts[k]; n > 0; n--) eol.exec(src);
  return { cut: eol.lastIndex, head: bs.slice(0, k).map(block), tail: bs.slice(k).map(block) };
}

function linesOf(src) {
  return String(src ?? '').replace(/\r\n?/g, '\n').split('\n');
}

// maxDepth bounds nested lists and blockquotes; deeper markers stay text.
const maxDepth = 6;
// maxURL bounds how far a link's destination or title is looked for, and
// maxParens how deep parentheses nest in it (as in cmark), so that text
// full of "[a](" stays quick to render.
const maxURL = 4096;
const maxParens = 32;

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const RULE = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( {0,3})(?:([-*+])|(\d{1,9})([.)]))([ \t]+)(\S.*)$/;
const DELIMITER_CELL = /^:?-+:?$/;
const LANG = /^[\w.+#-]{1,32}$/;

const blank = (line) => line.trim() === '';

// indentOf counts a line's leading columns, a tab as four; tabs stay in the
// text, so code keeps them.
function indentOf(line) {
  let n = 0;
  for (const c of line) {
    if (c === ' ') n++;
    else if (c === '\t') n += 4;
    else break;
  }
  return n;
}

// dedent removes up to n columns of leading spaces and tabs.
function dedent(line, n) {
  let k = 0;
  for (let col = 0; k < line.length && col < n; k++) {
    if (line[k] === ' ') col++;
    else if (line[k] === '\t') col += 4;
    else break;
  }
  return line.slice(k);
}

// blocks parses lines into block descriptions: { t: 'p' | 'h' | 'code' |
// 'hr' | 'quote' | 'list' | 'table', … }. starts, when given, receives
// each block's first line.
function blocks(lines, depth, starts) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (blank(lines[i])) {
      i++;
      continue;
    }
    const [b, next] = fenced(lines, i) ?? heading(lines, i) ?? rule(lines, i) ??
      (depth < maxDepth ? quote(lines, i, depth) ?? list(lines, i, depth) : null) ??
      table(lines, i) ?? paragraph(lines, i, depth);
    out.push(b);
    starts?.push(i);
    i = next;
  }
  return out;
}

// startsBlock tells whether lines[i] begins a block other than a paragraph,
// which ends the paragraph before it.
function startsBlock(lines, i, depth) {
  const l = lines[i];
  return fenceInfo(l) !== null || HEADING.test(l) || RULE.test(l) ||
    (depth < maxDepth && (QUOTE.test(l) || ITEM.test(l))) || isTable(lines, i);
}

// fenceInfo returns a fence line's { indent, mark, lang }, or null.
function fenceInfo(line) {
  const m = FENCE.exec(line);
  if (!m || (m[2][0] === '`' && m[3].includes('`'))) return null;
  const lang = m[3].trim().split(/\s/)[0];
  return { indent: m[1].length, mark: m[2], lang: LANG.test(lang) ? lang : '' };
}

function fenced(lines, i) {
  const f = fenceInfo(lines[i]);
  if (!f) return null;
  const closing = new RegExp(`^ {0,3}${f.mark[0] === '`' ? '`' : '~'}{${f.mark.length},}[ \\t]*$`);
  const body = [];
  let j = i + 1;
  for (; j < lines.length && !closing.test(lines[j]); j++) {
    body.push(dedent(lines[j], f.indent));
  }
  return [{ t: 'code', lang: f.lang, text: body.join('\n') }, j + 1];
}

function heading(lines, i) {
  const m = HEADING.exec(lines[i]);
  if (!m) return null;
  return [{ t: 'h', level: m[1].length, text: headingText(m[2] ?? '') }, i + 1];
}

// headingText drops a heading's closing run of #, when a space or tab (or
// nothing) comes before it. (By hand: a regular expression for it
// backtracks over long runs of spaces.)
function headingText(s) {
  const space = (c) => c === ' ' || c === '\t';
  let end = s.length;
  while (end > 0 && space(s[end - 1])) end--;
  let k = end;
  while (k > 0 && s[k - 1] === '#') k--;
  if (k < end && (k === 0 || space(s[k - 1]))) s = s.slice(0, k);
  return s.trim();
}

function rule(lines, i) {
  return RULE.test(lines[i]) ? [{ t: 'hr' }, i + 1] : null;
}

// quote takes the following lines that start with '>'.
function quote(lines, i, depth) {
  const inner = [];
  let j = i;
  for (let m; j < lines.length && (m = QUOTE.exec(lines[j])); j++) inner.push(m[1]);
  if (!inner.length) return null;
  return [{ t: 'quote', children: blocks(inner, depth + 1) }, j];
}

function itemOf(line) {
  const m = ITEM.exec(line);
  if (!m) return null;
  return {
    indent: m[1].length,
    kind: m[2] ?? m[4], // the bullet, or the number's delimiter
    ordered: !m[2],
    start: m[3] === undefined ? 1 : Number(m[3]),
    content: m[1].length + (m[2] ?? m[3] + m[4]).length + m[5].length,
    text: m[6],
  };
}

// list takes items with the same marker. A line indented at least two
// spaces past the marker belongs to the item (a nested list, or more
// text); an unindented line right after an item continues its paragraph.
// A blank line between items, or before more text in one, makes the list
// loose: its items' paragraphs keep their <p>.
function list(lines, i, depth) {
  const first = itemOf(lines[i]);
  if (!first) return null;
  const items = [];
  let tight = true;
  let j = i;
  for (;;) {
    const it = itemBody(lines, j, itemOf(lines[j]), depth);
    items.push(blocks(it.body, depth + 1));
    if (it.loose) tight = false;
    j = it.end;
    if (j >= lines.length || itemOf(lines[j])?.kind !== first.kind) break;
    if (it.gap) tight = false;
  }
  return [{ t: 'list', ordered: first.ordered, start: first.start, tight, items }, j];
}

// itemBody takes one list item's lines, the item's own indentation removed.
function itemBody(lines, i, item, depth) {
  const body = [item.text];
  let gap = false; // blank lines since the item's last line
  let loose = false;
  let j = i + 1;
  for (; j < lines.length; j++) {
    const l = lines[j];
    if (blank(l)) {
      gap = true;
      continue;
    }
    if (indentOf(l) >= item.indent + 2) {
      const inner = dedent(l, item.content);
      if (gap) {
        body.push('');
        if (!itemOf(inner)) loose = true;
      }
      body.push(inner);
      gap = false;
      continue;
    }
    if (gap || startsBlock(lines, j, depth)) break;
    body.push(l.trim());
  }
  return { body, end: j, gap, loose };
}

// isTable tells whether lines[i] is a table's header: cells separated by
// pipes, then a delimiter row with as many cells.
function isTable(lines, i) {
  const head = lines[i];
  const delim = lines[i + 1];
  if (!head.includes('|') || delim === undefined || !delim.includes('|') || !delim.includes('-')) return false;
  const d = cells(delim);
  return d.every((c) => DELIMITER_CELL.test(c)) && cells(head).length === d.length;
}

// table takes a header, its delimiter row (with the columns' alignment),
// and the rows up to a blank line or another block.
function table(lines, i) {
  if (!isTable(lines, i)) return null;
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map((c) =>
    c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : null);
  const rows = [];
  let j = i + 2;
  for (; j < lines.length && !blank(lines[j]) && !startsBlock(lines, j, 0); j++) {
    const row = cells(lines[j]).slice(0, head.length);
    while (row.length < head.length) row.push('');
    rows.push(row);
  }
  return [{ t: 'table', head, align, rows }, j];
}

// cells splits a table row at its unescaped pipes; "\|" is a pipe in a cell.
function cells(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

// paragraph takes lines up to a blank line or the start of another block.
function paragraph(lines, i, depth) {
  const text = [lines[i].trim()];
  let j = i + 1;
  for (; j < lines.length && !blank(lines[j]) && !startsBlock(lines, j, depth); j++) text.push(lines[j].trim());
  return [{ t: 'p', text: text.join('\n') }, j];
}

// block renders one block description.
function block(b) {
  switch (b.t) {
    case 'p':
      return h('p', null, inline(b.text));
    case 'h':
      return h(`h${Math.min(b.level + 2, 6)}`, null, inline(b.text));
    case 'code':
      return h('pre', { tabindex: '0' }, h('code', { 'data-lang': b.lang || null }, b.text));
    case 'hr':
      return h('hr');
    case 'quote':
      return h('blockquote', null, b.children.map(block));
    case 'list':
      return h(b.ordered ? 'ol' : 'ul', { start: b.ordered && b.start !== 1 ? b.start : null },
        b.items.map((item) => h('li', null, item.map((c) => b.tight && c.t === 'p' ? inline(c.text) : block(c)))));
    default: { // 'table'
      const cell = (tag, text, k) => h(tag, { 'data-align': b.align[k] }, inline(text));
      return h('div', { class: 'table-wrap' }, h('table', null,
        h('thead', null, h('tr', null, b.head.map((c, k) => cell('th', c, k)))),
        b.rows.length ? h('tbody', null, b.rows.map((r) => h('tr', null, r.map((c, k) => cell('td', c, k))))) : null));
    }
  }
}

// Inline text is read into tokens — strings, finished nodes (code, links,
// line breaks) and runs of *, _ or ~ — and the runs are then paired into
// emphasis by CommonMark's delimiter rules, so a marker without a partner
// (such as the first half of a bold while it streams in) stays text.

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const LINK_REL = 'noopener noreferrer nofollow';
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const SPACE = /\s/u;
const PUNCT = /[\p{P}\p{S}]/u;
const WORD = /[\p{L}\p{N}]/u;
const BARE_URL = /https?:\/\/[^\s<>"'`]+/iy;
const ANGLE_URL = /<((?:https?|mailto):[^\s<>]*)>/iy;

// inline renders a paragraph's, heading's or cell's text; inside a link's
// text (links false) nothing more becomes a link.
function inline(s, links = true) {
  const toks = tokens(s, links);
  pairDelimiters(toks);
  return nest(toks);
}

function tokens(s, links) {
  const toks = [];
  const noCloser = new Set(); // backtick run lengths with no closing run ahead
  let brackets = null; // '[' index → its ']' index, and find's memory, once a '[' is seen
  let text = '';
  const push = (tok) => {
    if (text) toks.push(text);
    text = '';
    toks.push(tok);
  };
  for (let i = 0; i < s.length;) {
    const c = s[i];
    let r = null;
    if (c === '\\' && ESCAPABLE.test(s[i + 1] ?? '')) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (c === '\\' && s[i + 1] === '\n') { // a hard break, as every newline is
      i++;
      continue;
    }
    if (c === '`') r = codeSpan(s, i, noCloser);
    else if (c === '\n') r = { node: h('br'), end: i + 1 };
    else if (links && c === '[') r = inlineLink(s, i, brackets ??= { pairs: pairBrackets(s), found: new Map() });
    else if (links && (c === '<' || c === 'h' || c === 'H')) r = link(s, i);
    else if (c === '*' || c === '_' || c === '~') r = delimiterRun(s, i);
    if (r?.node) {
      push(r.node);
      i = r.end;
    } else if (r?.run) {
      push(r.run);
      i += r.run.len;
    } else {
      const literal = r?.text ?? c;
      text += literal;
      i += literal.length;
    }
  }
  if (text) toks.push(text);
  return toks;
}

// codeSpan reads a run of n backticks and the text up to the next run of
// exactly n; without one, the run is text.
function codeSpan(s, i, noCloser) {
  const [n, j] = codeSpanEnd(s, i, noCloser);
  if (j < 0) return { text: '`'.repeat(n) };
  let code = s.slice(i + n, j).replace(/\n/g, ' ');
  if (code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
  return { node: h('code', null, code), end: j + n };
}

// codeSpanEnd returns the length n of the run of backticks at i and where
// the next run of exactly n starts, or -1. noCloser remembers the lengths
// with no such run ahead, so that the search stays linear.
function codeSpanEnd(s, i, noCloser) {
  let n = 1;
  while (s[i + n] === '`') n++;
  for (let j = noCloser.has(n) ? -1 : s.indexOf('`', i + n); j !== -1; j = s.indexOf('`', j)) {
    let m = 1;
    while (s[j + m] === '`') m++;
    if (m === n) return [n, j];
    j += m;
  }
  noCloser.add(n);
  return [n, -1];
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
  if (u.origin !== globalThis.location?.origin) return false;
  let path = u.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // a malformed escape: the path as it is
  }
  return path.replace(/\/+/g, '/').toLowerCase().startsWith('/login');
}

// anchor is a link; its title shows where it goes when its text says
// something else.
function anchor(href, children) {
  return h('a', { href, rel: LINK_REL, target: '_blank', title: href }, children);
}

// link reads <url> or a bare http(s) URL at i; null when there is none or
// its URL is not safe (then it stays text). A bare URL that is not taken is
// text as a whole, so that the next one is not looked for inside it.
function link(s, i) {
  if (s[i] === '<') {
    ANGLE_URL.lastIndex = i;
    const m = ANGLE_URL.exec(s);
    const href = m && safeHref(m[1]);
    return href ? { node: anchor(href, m[1]), end: i + m[0].length } : null;
  }
  if (i > 0 && WORD.test(s[i - 1])) return null;
  BARE_URL.lastIndex = i;
  const m = BARE_URL.exec(s);
  if (!m) return null;
  const url = trimURL(m[0]);
  const href = /^https?:\/\/[^/?#]/i.test(url) && safeHref(url);
  return href ? { node: anchor(href, url), end: i + url.length } : { text: url };
}

// trimURL drops what usually follows a URL in a sentence rather than
// belonging to it: final punctuation, and a ')' or ']' that closes nothing
// in the URL. The brackets are counted once, so that it stays linear.
function trimURL(url) {
  const count = { '(': 0, ')': 0, '[': 0, ']': 0 };
  for (const c of url) if (c in count) count[c]++;
  let end = url.length;
  for (; end > 0; end--) {
    const last = url[end - 1];
    if ('.,:;!?\'"*_~'.includes(last)) continue;
    if (last === ')' && count['('] < count[')']) count[')']--;
    else if (last === ']' && count['['] < count[']']) count[']']--;
    else break;
  }
  return url.slice(0, end);
}

// pairBrackets maps each '[' in s to the ']' that closes it (brackets nest;
// escaped ones and those in code spans do not count), in one pass.
function pairBrackets(s) {
  const pairs = new Map();
  const open = [];
  const noCloser = new Set();
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') {
      i++;
    } else if (s[i] === '`') {
      const [n, j] = codeSpanEnd(s, i, noCloser);
      i = j < 0 ? i + n - 1 : j + n - 1;
    } else if (s[i] === '[') {
      open.push(i);
    } else if (s[i] === ']' && open.length) {
      pairs.set(open.pop(), i);
    }
  }
  return pairs;
}

// inlineLink reads [text](destination "optional title"); null when there
// is none or its URL is not safe (then it stays text).
function inlineLink(s, i, brackets) {
  const j = brackets.pairs.get(i);
  if (j === undefined || s[j + 1] !== '(') return null;
  const dest = destination(s, j + 2, brackets.found);
  const href = dest && safeHref(dest.url);
  if (!href) return null;
  const label = s.slice(i + 1, j);
  return { node: anchor(href, label.trim() ? inline(label, false) : dest.url), end: dest.end };
}

// destination reads a link's destination (in <…>, or up to a space with
// its parentheses balanced), an optional title, and the closing ')'. found
// remembers, for each character looked for, the last search's start and
// what it found, so that text full of "[a](<" is not searched again and
// again to its end.
function destination(s, i, found) {
  const skip = (k) => {
    while (k < s.length && ' \t\n'.includes(s[k])) k++;
    return k;
  };
  let k = skip(i);
  let url = '';
  const find = (c, from) => {
    let f = found.get(c);
    if (!f || from < f.from || (f.end >= 0 && from > f.end)) found.set(c, f = { from, end: s.indexOf(c, from) });
    return f.end < 0 || f.end - from > maxURL ? -1 : f.end;
  };
  if (s[k] === '<') {
    const end = find('>', k);
    if (end < 0 || s.slice(k, end).includes('\n')) return null;
    url = s.slice(k + 1, end);
    k = end + 1;
  } else {
    let parens = 0;
    for (const stop = Math.min(s.length, k + maxURL); k < stop && s[k] > ' '; k++) {
      if (s[k] === '\\' && ESCAPABLE.test(s[k + 1] ?? '')) k++;
      else if (s[k] === '(' && ++parens > maxParens) return null;
      else if (s[k] === ')' && --parens < 0) break;
      url += s[k];
    }
  }
  k = skip(k);
  const close = { '"': '"', "'": "'", '(': ')' }[s[k]];
  if (close) {
    const end = find(close, k + 1);
    if (end < 0) return null;
    k = skip(end + 1);
  }
  return s[k] === ')' ? { url, end: k + 1 } : null;
}

// delimiterRun reads a run of *, _ or ~ and whether it can open or close
// emphasis (CommonMark's flanking rules; _ does not work inside words).
// Strikethrough takes exactly two tildes; other tilde runs are text.
function delimiterRun(s, i) {
  const ch = s[i];
  let n = 1;
  while (s[i + n] === ch) n++;
  if (ch === '~' && n !== 2) return { text: ch.repeat(n) };
  const before = s[i - 1] ?? ' ';
  const after = s[i + n] ?? ' ';
  const left = !SPACE.test(after) && (!PUNCT.test(after) || SPACE.test(before) || PUNCT.test(before));
  const right = !SPACE.test(before) && (!PUNCT.test(before) || SPACE.test(after) || PUNCT.test(after));
  let canOpen = left;
  let canClose = right;
  if (ch === '_') {
    canOpen = left && (!right || PUNCT.test(before));
    canClose = right && (!left || PUNCT.test(after));
  }
  return { run: { ch, len: n, n, canOpen, canClose, opens: [], closes: [] } };
}

const isRun = (t) => typeof t === 'object' && !(t instanceof Node);

// pairDelimiters pairs closing runs with the nearest matching opening run
// before them, as CommonMark's "process emphasis" does: each pair takes two
// characters (strong, or del for tildes) when both runs have two, else one
// (em). Runs between a pair are left as text. bottom remembers, for each
// kind of closer, how deep the search already failed, so the work stays
// linear.
function pairDelimiters(toks) {
  const openers = [];
  const bottom = new Map();
  for (const t of toks) {
    if (!isRun(t)) continue;
    while (t.canClose && t.n > 0) {
      const key = `${t.ch}${t.canOpen}${t.n % 3}`;
      const floor = bottom.get(key) ?? 0;
      let k = openers.length - 1;
      while (k >= floor && !(openers[k].ch === t.ch && !oddMatch(openers[k], t))) k--;
      if (k < floor) {
        bottom.set(key, openers.length);
        break;
      }
      const o = openers[k];
      const use = t.ch === '~' || (o.n >= 2 && t.n >= 2) ? 2 : 1;
      const tag = t.ch === '~' ? 'del' : use === 2 ? 'strong' : 'em';
      o.n -= use;
      t.n -= use;
      o.opens.push(tag);
      t.closes.push(tag);
      openers.length = o.n > 0 ? k + 1 : k;
      for (const [kk, v] of bottom) if (v > openers.length) bottom.set(kk, openers.length);
    }
    if (t.canOpen && t.n > 0) openers.push(t);
  }
}

// oddMatch is CommonMark's rule of three: a run that can both open and
// close pairs only when the two runs' lengths do not add up to a multiple
// of three, unless both are.
function oddMatch(o, c) {
  return (o.canClose || c.canOpen) && (o.len + c.len) % 3 === 0 && (o.len % 3 !== 0 || c.len % 3 !== 0);
}

// nest turns the paired tokens into nodes. A run closes its pairs (the
// innermost first), keeps its unpaired characters as text, then opens its
// pairs (the outermost first).
function nest(toks) {
  const stack = [{ tag: null, kids: [] }];
  const add = (x) => {
    const kids = stack[stack.length - 1].kids;
    if (typeof x === 'string' && typeof kids[kids.length - 1] === 'string') kids[kids.length - 1] += x;
    else kids.push(x);
  };
  for (const t of toks) {
    if (!isRun(t)) {
      add(t);
      continue;
    }
    for (const _ of t.closes) {
      const el = stack.pop();
      add(h(el.tag, null, el.kids));
    }
    if (t.n > 0) add(t.ch.repeat(t.n));
    for (const tag of t.opens.slice().reverse()) stack.push({ tag, kids: [] });
  }
  while (stack.length > 1) { // every pair closes, so only as a safeguard
    const el = stack.pop();
    add(h(el.tag, null, el.kids));
  }
  return stack[0].kids;
}
