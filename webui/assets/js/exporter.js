// Conversation export: the transcript as the API returns it (every page
// of GET …/messages), built into a Markdown or a JSON file in the browser
// and downloaded; nothing is sent anywhere.
import { h, errorBox, menu, replace } from './dom.js';
import { t } from './i18n.js';

const enc = encodeURIComponent;

// exportMenu is the header's Export menu for conv.
export function exportMenu(api, conv) {
  const status = h('div', { class: 'menu-status', role: 'status' });
  const item = (format, label) => h('button', {
    type: 'button', 'data-format': format, 'data-keep-open': '',
    onclick: async (e) => {
      const el = e.currentTarget.closest('details');
      replace(status);
      try {
        download(await exportFile(api, conv, format));
        el.open = false;
      } catch (err) {
        status.append(errorBox(err, t('export.failed')));
      }
    },
  }, label);
  return menu('export-menu', { class: 'button small' }, t('export.title'),
    [item('md', t('export.markdown')), item('json', t('export.json'))], status);
}

// allMessages reads the whole transcript, page by page (newest first),
// oldest first.
export async function allMessages(api, id) {
  let out = [];
  let before = 0;
  for (;;) {
    const res = await api.get(`/api/conversations/${enc(id)}/messages${before ? `?before=${before}` : ''}`);
    const page = res?.messages ?? [];
    out = page.concat(out);
    if (!res?.more || !page.length) return out;
    before = page[0].seq;
  }
}

// exportFile builds conv's export: {name, type, text}.
export async function exportFile(api, conv, format) {
  const [fresh, messages] = await Promise.all([api.get(`/api/conversations/${enc(conv.id)}`).catch(() => conv), allMessages(api, conv.id)]);
  const stem = `quiver-${slug(fresh.title) || fresh.id}`;
  if (format === 'json') {
    const doc = {
      conversation: { id: fresh.id, agent: fresh.agent, title: fresh.title, created_at: fresh.created_at, updated_at: fresh.updated_at },
      exported_at: new Date().toISOString(),
      messages,
    };
    return { name: `${stem}.json`, type: 'application/json', text: JSON.stringify(doc, null, 2) + '\n' };
  }
  return { name: `${stem}.md`, type: 'text/markdown', text: toMarkdown(fresh, messages) };
}

// toMarkdown writes a transcript as Markdown: a heading per message, the
// messages' text as written, tool arguments and results in fences long
// enough not to close early.
export function toMarkdown(conv, messages) {
  const title = conv.title || t('chat.untitled', { agent: conv.agent });
  const out = [`# ${title}`, '', `${t('export.agent')}: ${conv.agent}  `, `${t('export.exported')}: ${new Date().toISOString()}`, ''];
  const names = new Map();
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        out.push(`## ${t('msg.you')}`, '', m.content, '');
        break;
      case 'assistant':
        if (m.content) out.push(`## ${t('msg.agent')}`, '', m.content, '');
        break;
      case 'tool_call':
        names.set(m.tool_call_id, m.tool_name);
        out.push(`### ${t('export.toolCall', { tool: m.tool_name ?? '?' })}`, '', fence(m.content, 'json'), '');
        break;
      case 'tool':
        out.push(`### ${m.is_error ? t('export.toolError', { tool: m.tool_name ?? names.get(m.tool_call_id) ?? '?' })
          : t('export.toolResult', { tool: m.tool_name ?? names.get(m.tool_call_id) ?? '?' })}`, '', fence(m.content, ''), '');
        break;
      case 'thought':
        out.push(`### ${t('msg.thought')}`, '', m.content, '');
        break;
    }
  }
  return out.join('\n');
}

// fence puts s in a code fence one backtick longer than any run in it.
function fence(s, lang) {
  const text = String(s ?? '');
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

function slug(s) {
  return String(s ?? '').normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
}

// download saves a file the page built, through a link to a blob URL
// (same origin) that is clicked and revoked.
function download(file) {
  const url = URL.createObjectURL(new Blob([file.text], { type: `${file.type};charset=utf-8` }));
  const a = h('a', { href: url, download: file.name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
