// Small DOM helpers. Text always goes in as text nodes, never as HTML, so
// nothing the model, a tool or a user wrote can become markup.
import { t, formatNumber, locale } from './i18n.js';

// h builds an element. attrs: "class", "for", aria-* and other attributes
// as strings; on* functions become event listeners; "value", "checked",
// "disabled", "hidden", "selected" are set as properties; null, undefined
// and false are skipped. children: nodes, strings, arrays, or null.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, val] of Object.entries(attrs ?? {})) {
    if (val == null || val === false) continue;
    if (key.startsWith('on') && typeof val === 'function') {
      el.addEventListener(key.slice(2), val);
    } else if (PROPS.has(key)) {
      el[key] = val;
    } else if (key === 'class') {
      el.className = val;
    } else {
      el.setAttribute(key, val === true ? '' : String(val));
    }
  }
  append(el, children);
  return el;
}

const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'selected']);

// append adds children (nodes, strings, numbers, nested arrays) to el.
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// replace swaps el's children for children (as append takes them).
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// pretty formats JSON (a value, or a string holding JSON) for a <pre>;
// anything that is not JSON comes back as it is.
export function pretty(v) {
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return v;
    }
  }
  return v === undefined ? '' : JSON.stringify(v, null, 2);
}

// chars counts Unicode code points, as the server's sizes do.
export function chars(s) {
  let n = 0;
  for (const _ of s ?? '') n++;
  return n;
}

// number formats an integer for people.
export function number(n) {
  return formatNumber(n);
}

// when formats a timestamp briefly in the browser's zone.
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return d.toLocaleString(locale(), { dateStyle: 'medium', timeStyle: 'short' });
}

// meter shows used against a ceiling: a <meter> with a text equivalent.
export function meter(label, used, ceiling) {
  const over = ceiling > 0 && used > ceiling;
  return h('div', { class: over ? 'gauge over' : 'gauge' },
    h('span', { class: 'gauge-label' }, label),
    ceiling > 0
      ? h('meter', { min: 0, max: ceiling, high: ceiling * 0.85, optimum: 0, value: Math.min(used, ceiling), 'aria-hidden': 'true' })
      : null,
    h('span', { class: 'gauge-text' },
      ceiling > 0 ? t('meter.ofCeiling', { used: number(used), ceiling: number(ceiling) }) : t('meter.used', { used: number(used) }),
      over ? t('meter.over') : ''));
}

// confirm asks a yes/no question in a modal <dialog> (focus stays inside
// it; Escape answers no) and resolves true only for the confirm button.
export function confirm(question, confirmLabel) {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'submit', value: 'yes', class: 'danger' }, confirmLabel);
    const no = h('button', { type: 'submit', value: 'no' }, t('common.keep'));
    const dlg = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-q' },
      h('form', { method: 'dialog' },
        h('p', { id: 'confirm-q' }, question),
        h('div', { class: 'row' }, no, yes)));
    dlg.addEventListener('close', () => {
      dlg.remove();
      resolve(dlg.returnValue === 'yes');
    });
    document.body.append(dlg);
    dlg.showModal();
    no.focus();
  });
}

// field is a labelled form control with optional help text, which the
// control names as its description.
export function field(id, label, input, help) {
  if (help) input.setAttribute('aria-describedby', `${id}-help`);
  return h('div', { class: 'field' },
    h('label', { for: id }, label), input,
    help ? h('p', { class: 'muted small', id: `${id}-help` }, help) : null);
}

// errorBox is an alert with an error's message. With retry, a request
// that did not reach the server (ApiError.offline) or that the server
// failed (5xx) offers a Retry button that calls it.
export function errorBox(err, prefix, retry) {
  const msg = err?.message ?? String(err);
  const again = retry && (err?.status === 0 || err?.status >= 500);
  return h(again ? 'div' : 'p', { class: 'alert', role: 'alert' },
    again ? h('p', null, prefix ? `${prefix}: ${msg}` : msg) : (prefix ? `${prefix}: ${msg}` : msg),
    again ? h('button', { type: 'button', class: 'retry', onclick: retry }, t('common.retry')) : null);
}

// heading is a page's <h1>; route changes move focus to it.
export function heading(text) {
  return h('h1', { tabindex: '-1' }, text);
}

const SVG = 'http://www.w3.org/2000/svg';
// ICONS are stroked 24×24 paths.
const ICONS = {
  copy: ['M9 9h11v11H9z', 'M5 15H4V4h11v1'],
  check: ['M5 12l5 5L20 7'],
  clip: ['M21 11.5l-8.6 8.6a5.5 5.5 0 0 1-7.8-7.8l8.6-8.6a3.7 3.7 0 0 1 5.2 5.2l-8.6 8.6a1.8 1.8 0 0 1-2.6-2.6l7.9-7.9'],
};

// icon is a small decorative SVG icon (hidden from assistive technology;
// the control it sits in names itself).
export function icon(name) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', `svg-icon icon-${name}`);
  for (const d of ICONS[name] ?? []) {
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', d);
    svg.append(p);
  }
  return svg;
}

// menu is a disclosure menu: a <details> whose summary shows label and
// whose items (buttons) show below it. Choosing an item, clicking
// elsewhere or Escape closes it (Escape returns focus to the summary).
// summaryAttrs go on the summary (an aria-label, a class).
export function menu(cls, summaryAttrs, label, items, ...extra) {
  const summary = h('summary', summaryAttrs, label);
  const list = h('div', { class: 'menu-list' }, items, extra);
  const el = h('details', { class: `menu ${cls}` }, summary, list);
  const outside = (e) => {
    if (!el.contains(e.target)) el.open = false;
  };
  el.addEventListener('toggle', () => {
    if (el.open) document.addEventListener('pointerdown', outside, true);
    else document.removeEventListener('pointerdown', outside, true);
  });
  el.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && el.open) {
      e.stopPropagation();
      el.open = false;
      summary.focus();
    }
  });
  list.addEventListener('click', (e) => {
    if (e.target.closest('button[data-keep-open]')) return;
    if (e.target.closest('button')) el.open = false;
  });
  return el;
}

// copyInput copies an input's text: the Clipboard API where the page may
// use it (a secure context), else the input's selection. It resolves
// whether the text was copied.
export async function copyInput(input) {
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}
