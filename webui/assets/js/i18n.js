// The pages' words: one catalog per language, a JSON file each in
// assets/i18n/ (en.json, vi.json), keyed by dotted names. t(key, params)
// looks a key up in the chosen language, then in English, and fills
// {name} placeholders with params' values (as text: the result goes into
// text nodes, never markup). tn(key, n, params) picks the plural form
// key.one / key.other by Intl.PluralRules. English is imported with the
// module, so t works in any module from the start; another language is
// loaded when chosen. Keys are string literals in the code, so that
// catalog_test.go finds every key used and checks each catalog has it.
//
// The language is the one stored in this browser (localStorage
// "quiver.lang"), else the first of navigator.languages that has a
// catalog, else English. Elements of the static page carry data-i18n
// (their text) or data-i18n-label (their aria-label) with a key;
// translateStatic fills them.
import en from '../i18n/en.json' with { type: 'json' };

// languages are the catalogs there are, each named in its own language.
export const languages = [
  { code: 'en', name: 'English' },
  { code: 'vi', name: 'Tiếng Việt' },
];

const STORE = 'quiver.lang';
const catalogs = { en };
let current = 'en';
let plurals = new Intl.PluralRules('en');

// t returns the text of key in the current language (English when the
// language lacks it; the key itself when English does too), with each
// {name} replaced by String(params[name]).
export function t(key, params) {
  const s = catalogs[current]?.[key] ?? en[key] ?? key;
  if (!params) return s;
  return s.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

// tn is t for a count: key.one or key.other (as the language's plural
// rules choose for n), with {n} set to n formatted for the language.
export function tn(key, n, params) {
  const form = plurals.select(n);
  const k = `${key}.${form}`;
  const s = catalogs[current]?.[k] !== undefined || en[k] !== undefined ? k : `${key}.other`;
  return t(s, { n: formatNumber(n), ...params });
}

// formatNumber formats a number for the current language.
export function formatNumber(n) {
  return new Intl.NumberFormat(locale()).format(n ?? 0);
}

// lang is the current language's code.
export function lang() {
  return current;
}

// locale is the current language as a BCP 47 tag for Intl formatters.
export function locale() {
  return current;
}

// preferred is the language to start with: the stored choice, else the
// browser's first language with a catalog, else English.
function preferred() {
  let stored = null;
  try {
    stored = localStorage.getItem(STORE);
  } catch {
    // storage blocked: use the browser's languages
  }
  if (languages.some((l) => l.code === stored)) return stored;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (languages.some((l) => l.code === base)) return base;
  }
  return 'en';
}

// load fetches a language's catalog once; it resolves false when it
// cannot be read (the pages then stay in English).
async function load(code) {
  if (catalogs[code]) return true;
  try {
    catalogs[code] = (await import(`../i18n/${code}.json`, { with: { type: 'json' } })).default;
    return true;
  } catch (err) {
    console.warn(`quiver: the ${code} catalog could not be loaded`, err);
    return false;
  }
}

// use makes code the current language, once its catalog is loaded, and
// marks the document with it.
async function use(code) {
  if (!(await load(code))) code = 'en';
  current = code;
  plurals = new Intl.PluralRules(code);
  document.documentElement.lang = code;
  translateStatic(document);
}

// initI18n chooses the starting language and loads its catalog.
export function initI18n() {
  return use(preferred());
}

// setLanguage switches to code and stores the choice in this browser;
// listeners of the "quiver:language" window event re-render.
export async function setLanguage(code) {
  if (!languages.some((l) => l.code === code)) return;
  try {
    localStorage.setItem(STORE, code);
  } catch {
    // not stored: the choice lasts for this page
  }
  await use(code);
  window.dispatchEvent(new CustomEvent('quiver:language', { detail: code }));
}

// translateStatic fills root's [data-i18n] elements' text and
// [data-i18n-label] elements' aria-label from the catalog.
export function translateStatic(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', t(el.dataset.i18nLabel));
}

// tx is t for text with elements in it: each {name} whose param is a
// Node is that node; the result is an array of strings and nodes for
// h() or append().
export function tx(key, params) {
  const s = catalogs[current]?.[key] ?? en[key] ?? key;
  const out = [];
  let last = 0;
  for (const m of s.matchAll(/\{(\w+)\}/g)) {
    if (!(m[1] in params)) continue;
    out.push(s.slice(last, m.index), params[m[1]] instanceof Node ? params[m[1]] : String(params[m[1]]));
    last = m.index + m[0].length;
  }
  out.push(s.slice(last));
  return out.filter((x) => x !== '');
}
