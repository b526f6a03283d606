// Markdown for the agent's answers, rendered by a small parser of our own.
// It builds elements with h() and text nodes only: HTML in an answer stays
// text, and only http, https and mailto URLs become links. What it does not
// know stays literal text.
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
  const lines = String(src ?? '').replace(/\r\n?/g, '\n').split('\n');
  return blocks(lines, 0).map(block);
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
const DELIMITER_ROW = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
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
// 'hr' | 'quote' | 'list' | 'table', … }.
function blocks(lines, depth) {
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
  const text = (m[2] ?? '').replace(/(?:^|[ \t]+)#+[ \t]*$/, '').trim();
  return [{ t: 'h', level: m[1].length, text }, i + 1];
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
  return head.includes('|') && delim !== undefined && DELIMITER_ROW.test(delim) &&
    delim.includes('|') && cells(head).length === cells(delim).length;
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
const BARE_URL = /https?:\/\/[^\s<>]+/iy;
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
  let brackets = null; // '[' index → its ']' index, once a '[' is seen
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
    else if (links && c === '[') r = inlineLink(s, i, brackets ??= pairBrackets(s));
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
  let n = 1;
  while (s[i + n] === '`') n++;
  for (let j = noCloser.has(n) ? -1 : s.indexOf('`', i + n); j !== -1; j = s.indexOf('`', j)) {
    let m = 1;
    while (s[j + m] === '`') m++;
    if (m === n) {
      let code = s.slice(i + n, j).replace(/\n/g, ' ');
      if (code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
      return { node: h('code', null, code), end: j + n };
    }
    j += m;
  }
  noCloser.add(n);
  return { text: '`'.repeat(n) };
}

// safeHref returns the URL as the page will use it, when it is an http,
// https or mailto URL; anything else (javascript:, data:, relative) is null.
function safeHref(raw) {
  let u;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(u.protocol) ? u.href : null;
}

function anchor(href, children) {
  return h('a', { href, rel: LINK_REL, target: '_blank' }, children);
}

// link reads <url> or a bare http(s) URL at i; null when there is none or
// its URL is not safe (then it stays text).
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
  const href = safeHref(url);
  return href && /^https?:\/\/[^/?#]/i.test(url) ? { node: anchor(href, url), end: i + url.length } : null;
}

// trimURL drops what usually follows a URL in a sentence rather than
// belonging to it: final punctuation, and a ')' with no '(' in the URL.
function trimURL(url) {
  for (;;) {
    const last = url[url.length - 1];
    if ('.,:;!?\'"*_~'.includes(last)) {
      url = url.slice(0, -1);
    } else if (last === ')' && url.split('(').length < url.split(')').length) {
      url = url.slice(0, -1);
    } else {
      return url;
    }
  }
}

// pairBrackets maps each '[' in s to the ']' that closes it (brackets nest;
// escaped ones do not count), in one pass.
function pairBrackets(s) {
  const pairs = new Map();
  const open = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '[') open.push(i);
    else if (s[i] === ']' && open.length) pairs.set(open.pop(), i);
  }
  return pairs;
}

// inlineLink reads [text](destination "optional title"); null when there
// is none or its URL is not safe (then it stays text).
function inlineLink(s, i, brackets) {
  const j = brackets.get(i);
  if (j === undefined || s[j + 1] !== '(') return null;
  const dest = destination(s, j + 2);
  const href = dest && safeHref(dest.url);
  if (!href) return null;
  const label = s.slice(i + 1, j);
  return { node: anchor(href, label.trim() ? inline(label, false) : dest.url), end: dest.end };
}

// destination reads a link's destination (in <…>, or up to a space with
// its parentheses balanced), an optional title, and the closing ')'.
function destination(s, i) {
  const skip = (k) => {
    while (k < s.length && ' \t\n'.includes(s[k])) k++;
    return k;
  };
  let k = skip(i);
  let url = '';
  const find = (c, from) => {
    const end = s.indexOf(c, from);
    return end < 0 || end - from > maxURL ? -1 : end;
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
