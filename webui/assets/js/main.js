// The app: sign-in check, navigation, the hash router, and the header's
// theme and language choices. Routes:
//   #/chat[/ID]            chat (a new conversation, or one)
//   #/inspect[/ID][?turn=T&message=M]   turn inspector
//   #/agents[/NAME|/new]   agents and the YAML editor
//   #/tools[?agent=A&tool=T]  tool console and catalog
//   #/mcp                  MCP servers (admins)
//   #/settings             organisation settings (admins)
//   #/people               users, invitations and login links (admins)
//   #/memories             your memories (admins: the shared ones too)
//   #/scheduled            your scheduled tasks (admins: everyone's too)
//   #/preferences          your own profile and Deliberate Tool Mode
import { Api, ApiError } from './api.js';
import { h, heading, errorBox, replace } from './dom.js';
import { t, tx, initI18n, setLanguage, languages, lang } from './i18n.js';
import { theme, setTheme } from './theme.js';
import * as chat from './chat.js';
import * as inspector from './inspector.js';
import * as agents from './agents.js';
import * as tools from './tools.js';
import * as mcp from './mcp.js';
import * as settings from './settings.js';
import * as people from './people.js';
import * as preferences from './preferences.js';
import * as memories from './memories.js';
import * as scheduled from './scheduled.js';

const pages = { chat, inspect: inspector, agents, tools, mcp, settings, people, preferences, memories, scheduled };

const api = new Api();
const main = document.getElementById('main');
let me = null;
// signedOutNote returns the note the sign-in page shows, if any (a
// function, so a language change shows it again in the new language).
let signedOutNote = null;
// navigation counts route changes; a render finishing after a newer one
// started is dropped.
let navigation = 0;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || 'chat', args: parts.slice(1), query: new URLSearchParams(query) };
}

// route renders the page the hash names. The page builds into a detached
// element that replaces main's content only if no later navigation began
// meanwhile, so a slow page never lands on top of a newer one. A page's
// render may return the element to focus; otherwise its heading gets
// focus, as after a page load. The chat fills the window (body.app-chat);
// other pages scroll with the document.
async function route() {
  if (!me) return;
  const seq = ++navigation;
  const hash = location.hash;
  const r = parseHash();
  const page = pages[r.page];
  for (const a of document.querySelectorAll('#nav a, #who-name')) {
    if (a.dataset.page === r.page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  main.setAttribute('aria-busy', 'true');
  const view = h('div', { class: `page page-${r.page}` });
  let focus = null;
  try {
    if (!page) {
      view.append(heading(t('shell.notFound')), h('p', null, t('shell.notFoundText'), ' ', h('a', { href: '#/chat' }, t('shell.goToChat'))));
    } else {
      focus = await page.render({ api, me, main: view, args: r.args, query: r.query, refreshMe });
    }
  } catch (err) {
    if (!view.querySelector('h1')) view.prepend(heading('Quiver'));
    view.append(errorBox(err, t('shell.pageFailed'), () => route()));
  }
  if (seq !== navigation || !me) return;
  document.body.classList.toggle('app-chat', r.page === 'chat' && Boolean(view.querySelector('.chat')));
  replace(main, view);
  // The route main shows, as it was asked for (a page may rewrite its
  // query meanwhile); tests wait for it before looking inside.
  main.dataset.route = hash;
  main.removeAttribute('aria-busy');
  (focus ?? view.querySelector('h1') ?? main).focus({ preventScroll: !focus });
  document.title = `${view.querySelector('h1')?.textContent ?? 'Quiver'} · Quiver`;
}

function signedOut(note) {
  me = null;
  signedOutNote = note ?? null;
  navigation++;
  main.removeAttribute('aria-busy');
  document.body.classList.remove('app-chat');
  document.getElementById('nav').hidden = true;
  document.getElementById('who').hidden = true;
  showSignIn();
}

// showSignIn is the page for a visitor without a session.
function showSignIn() {
  replace(main,
    heading(t('signin.title')),
    signedOutNote ? h('p', { class: 'notice' }, signedOutNote()) : null,
    h('p', null, tx('signin.link', { serve: h('code', null, 'quiver serve'), loginLink: h('code', null, 'quiver login-link') })),
    h('p', null, tx('signin.token', { header: h('code', null, 'Authorization: Bearer <token>') })));
  main.focus();
}

async function boot() {
  await initI18n();
  prefsControls();
  let who;
  try {
    who = await api.get('/api/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      signedOut();
      return;
    }
    replace(main, heading('Quiver'), errorBox(err, t('shell.noAnswer'), () => location.reload()));
    return;
  }
  me = who;
  api.onUnauthorized = () => signedOut(() => t('signin.ended'));
  showMe();
  document.getElementById('logout').addEventListener('click', logout);
  window.addEventListener('hashchange', route);
  await route();
}

// prefsControls wires the header's theme and language choices: both are
// this browser's, stored in localStorage. A new language re-renders the
// page (a conversation reloads from the server; a turn running goes on
// there).
function prefsControls() {
  const themes = document.getElementById('theme');
  themes.value = theme();
  themes.addEventListener('change', () => setTheme(themes.value));
  const langs = document.getElementById('lang');
  replace(langs, languages.map((l) => h('option', { value: l.code, lang: l.code }, l.name)));
  langs.value = lang();
  langs.addEventListener('change', () => setLanguage(langs.value));
  window.addEventListener('quiver:language', () => {
    langs.value = lang();
    if (me) {
      showMe();
      route();
    } else {
      showSignIn();
    }
  });
}

// showMe puts the signed-in user in the header and shows the navigation
// their role may use.
function showMe() {
  api.csrf = me.csrf_token ?? '';
  document.getElementById('nav').hidden = false;
  document.getElementById('who').hidden = false;
  // The name links to the user's preferences.
  const who = document.getElementById('who-name');
  const name = me.display_name || t('shell.signedIn');
  who.textContent = me.role === 'admin' ? t('shell.adminName', { name }) : name;
  who.setAttribute('aria-label', t('shell.yourPreferences', { name: who.textContent }));
  for (const el of document.querySelectorAll('[data-admin]')) el.hidden = me.role !== 'admin';
}

// refreshMe reads the signed-in user again (after they changed their own
// name or role) and returns it.
async function refreshMe() {
  const now = await api.get('/api/me');
  if (!me) return null;
  me = now;
  showMe();
  return me;
}

async function logout() {
  try {
    await api.post('/api/logout');
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) {
      main.prepend(errorBox(err, t('shell.signOutFailed')));
      return;
    }
  }
  signedOut(() => t('signin.signedOut'));
}

boot();
