// Chat: the conversation list on the left (a drawer at phone width), the
// conversation in the middle with its composer pinned at the bottom, and
// the artifacts panel on the right (artifacts.js; hidden until one is opened).
// #/chat is a new chat: its composer starts a conversation with the first
// message; #/chat/ID is one conversation.
import { h } from './dom.js';
import { t, tx } from './i18n.js';
import { Sidebar } from './sidebar.js';
import { Thread, listFiles } from './thread.js';
import { ArtifactPanel } from './artifacts.js';

const enc = encodeURIComponent;
const AGENT = 'quiver.agent';

export async function render({ api, me, main, args }) {
  const id = args[0];
  const [list, agents] = await Promise.all([api.get('/api/conversations'), agentNames(api)]);
  const toggle = h('button', { type: 'button', class: 'convs-toggle', id: 'convs-toggle', 'aria-controls': 'convs', 'aria-expanded': 'false' },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, '☰ '), h('span', { class: 'toggle-label' }, t('convs.title')));
  const sidebar = new Sidebar(api, id);
  sidebar.show(list?.conversations ?? []);
  let thread;
  const artifacts = new ArtifactPanel(api, h('aside', { id: 'artifacts' }), () => thread?.conv?.id ?? id ?? null);
  if (!id) {
    thread = await newChat(api, me, agents, sidebar, toggle, artifacts);
  } else {
    const convReq = api.get(`/api/conversations/${enc(id)}`);
    const [conv, msgs, model, models, files] = await Promise.all([
      convReq,
      api.get(`/api/conversations/${enc(id)}/messages`),
      convReq.then((c) => modelStatus(api, c.agent)),
      modelChoices(api, `/api/conversations/${enc(id)}/models`),
      listFiles(api, id),
      artifacts.refresh(),
    ]);
    thread = new Thread(api, conv, {
      toggle,
      artifacts: artifacts.button,
      notice: model?.connected === false ? modelNotice(conv.id, conv.agent, model, me) : null,
      titled: (c) => sidebar.retitle(c),
    });
    thread.load(msgs?.messages ?? [], Boolean(msgs?.more), msgs?.turns, files);
    thread.showModels(models);
  }
  sidebar.on = {
    renamed: (c) => {
      if (c.id === thread.conv?.id) thread.rename(c.title);
    },
    deleted: (gone) => {
      if (gone === thread.conv?.id) location.hash = '#/chat';
    },
  };
  const backdrop = h('div', { class: 'drawer-backdrop', hidden: true });
  const shell = h('div', { class: 'chat' }, sidebar.el, backdrop, thread.el, artifacts.el);
  drawer(shell, sidebar.el, toggle, backdrop);
  main.append(shell);
  return thread.input;
}

// newChat is the thread of a new conversation: nothing exists until its
// first message is sent. The agent last picked in this browser is picked
// again.
async function newChat(api, me, agents, sidebar, toggle, artifacts) {
  let stored = null;
  try {
    stored = localStorage.getItem(AGENT);
  } catch {
    // not stored: the first agent
  }
  const agent = agents.includes(stored) ? stored : agents[0];
  const notice = async (name) => {
    const status = name ? await modelStatus(api, name) : null;
    return status?.connected === false ? modelNotice(null, name, status, me) : null;
  };
  const thread = new Thread(api, null, {
    agents, agent, toggle, notice: await notice(agent), artifacts: artifacts.button,
    created: (c) => {
      history.replaceState(null, '', `#/chat/${enc(c.id)}`);
      sidebar.add(c);
    },
    titled: (c) => sidebar.retitle(c),
    agentChanged: async (name) => {
      try {
        localStorage.setItem(AGENT, name);
      } catch {
        // not stored
      }
      const [n, models] = await Promise.all([notice(name), modelChoices(api, `/api/agents/${enc(name)}/models`)]);
      thread.setNotice(n);
      thread.showModels(models);
    },
  });
  if (agent) thread.showModels(await modelChoices(api, `/api/agents/${enc(agent)}/models`));
  return thread;
}

// drawer makes the sidebar a drawer at phone width: the toggle opens it
// over the chat, and Escape, the backdrop or picking a conversation
// closes it. Closed, it is inert (out of the tab order and of the
// accessibility tree); at desktop width it is always shown.
function drawer(shell, panel, toggle, backdrop) {
  const phone = matchMedia('(max-width: 48rem)');
  const set = (open) => {
    shell.classList.toggle('drawer-open', open);
    toggle.setAttribute('aria-expanded', String(open));
    backdrop.hidden = !open;
    panel.inert = phone.matches && !open;
  };
  toggle.addEventListener('click', () => {
    const open = !shell.classList.contains('drawer-open');
    set(open);
    if (open) panel.querySelector('#conv-search')?.focus();
  });
  backdrop.addEventListener('click', () => set(false));
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && shell.classList.contains('drawer-open') && !e.target.closest('form')) {
      set(false);
      toggle.focus();
    }
  });
  panel.addEventListener('click', (e) => {
    if (e.target.closest('a[href^="#/chat"]')) set(false);
  });
  phone.addEventListener('change', () => set(false));
  set(false);
}

// agentNames lists the organisation's agents; an error leaves it empty
// (the chat still works for existing conversations).
async function agentNames(api) {
  try {
    const res = await api.get('/api/agents');
    return (res?.agents ?? []).map((a) => a.name).sort();
  } catch {
    return [];
  }
}

// modelStatus asks whether the agent's model is connected; null when the
// server cannot say (the chat then finds out when a message is sent).
async function modelStatus(api, agent) {
  try {
    return await api.get(`/api/agents/${enc(agent)}/model-status`);
  } catch {
    return null;
  }
}

// modelChoices reads the models a conversation may run on (GET
// …/models); null when the server cannot say (no picker then).
async function modelChoices(api, path) {
  try {
    return await api.get(path);
  } catch {
    return null;
  }
}

// modelNotice says, before anything is sent, that the agent's model is
// not connected, with the server's help, and what works meanwhile.
// conversationID is null in a new chat (the inspector then opens on its
// own).
function modelNotice(conversationID, agent, status, me) {
  const inspector = h('a', { href: conversationID ? `#/inspect/${enc(conversationID)}` : '#/inspect' }, t('notice.inspector'));
  const tools = h('a', { href: `#/tools?agent=${enc(agent)}` }, t('notice.console'));
  return h('section', { class: 'notice model-notice', id: 'model-notice', 'aria-labelledby': 'model-notice-h' },
    h('h2', { id: 'model-notice-h' }, t('notice.title')),
    h('p', { id: 'model-notice-text' }, status.model ? t('notice.model', { model: status.model }) : t('notice.noModel')),
    status.help ? h('p', { class: 'help-text' }, status.help) : null,
    h('p', null, me?.role === 'admin'
      ? tx('notice.meanwhileAdmin', { inspector, tools, settings: h('a', { href: '#/settings' }, t('notice.settings')) })
      : tx('notice.meanwhile', { inspector, tools })));
}
