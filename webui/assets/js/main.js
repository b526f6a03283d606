// The app: sign-in check, navigation and the hash router. Routes:
//   #/chat[/ID]            chat (a conversation, or the list)
//   #/inspect[/ID][?turn=T&message=M]   turn inspector
//   #/agents[/NAME|/new]   agents and the YAML editor
//   #/tools[?agent=A&tool=T]  tool console and catalog
//   #/mcp                  MCP servers (admins)
//   #/settings             organisation settings (admins)
//   #/people               users, invitations and login links (admins)
//   #/preferences          your own profile and Deliberate Tool Mode
import { Api, ApiError } from './api.js';
import { h, heading, errorBox, replace } from './dom.js';
import * as chat from './chat.js';
import * as inspector from './inspector.js';
import * as agents from './agents.js';
import * as tools from './tools.js';
import * as mcp from './mcp.js';
import * as settings from './settings.js';
import * as people from './people.js';
import * as preferences from './preferences.js';

const pages = { chat, inspect: inspector, agents, tools, mcp, settings, people, preferences };

const api = new Api();
const main = document.getElementById('main');
let me = null;
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
// focus, as after a page load.
async function route() {
  if (!me) return;
  const seq = ++navigation;
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
      view.append(heading('Not found'), h('p', null, 'There is no page here. ', h('a', { href: '#/chat' }, 'Go to the chat.')));
    } else {
      focus = await page.render({ api, me, main: view, args: r.args, query: r.query, refreshMe });
    }
  } catch (err) {
    if (!view.querySelector('h1')) view.prepend(heading('Quiver'));
    view.append(errorBox(err, 'This page could not load'));
  }
  if (seq !== navigation || !me) return;
  replace(main, view);
  main.removeAttribute('aria-busy');
  (focus ?? view.querySelector('h1') ?? main).focus({ preventScroll: !focus });
  document.title = `${view.querySelector('h1')?.textContent ?? 'Quiver'} · Quiver`;
}

function signedOut(message) {
  me = null;
  navigation++;
  main.removeAttribute('aria-busy');
  document.getElementById('nav').hidden = true;
  document.getElementById('who').hidden = true;
  replace(main,
    heading('Sign in to Quiver'),
    message ? h('p', { class: 'notice' }, message) : null,
    h('p', null, 'Open a one-time login link: ', h('code', null, 'quiver serve'),
      ' prints one on its first start, ', h('code', null, 'quiver login-link'),
      ' makes another, or ask an admin of your organisation. A link works once; it starts a browser session.'),
    h('p', null, 'Programs use an API token instead: ', h('code', null, 'Authorization: Bearer <token>'), '.'));
  main.focus();
}

async function boot() {
  try {
    me = await api.get('/api/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      signedOut();
      return;
    }
    replace(main, heading('Quiver'), errorBox(err, 'The server did not answer'));
    return;
  }
  api.onUnauthorized = () => signedOut('Your session has ended. Sign in again to go on.');
  showMe();
  document.getElementById('logout').addEventListener('click', logout);
  window.addEventListener('hashchange', route);
  await route();
}

// showMe puts the signed-in user in the header and shows the navigation
// their role may use.
function showMe() {
  api.csrf = me.csrf_token ?? '';
  document.getElementById('nav').hidden = false;
  document.getElementById('who').hidden = false;
  // The name links to the user's preferences.
  const who = document.getElementById('who-name');
  who.textContent = `${me.display_name || 'Signed in'}${me.role === 'admin' ? ' (admin)' : ''}`;
  who.setAttribute('aria-label', `${who.textContent}: your preferences`);
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
      main.prepend(errorBox(err, 'Sign-out failed'));
      return;
    }
  }
  signedOut('You are signed out.');
}

boot();
