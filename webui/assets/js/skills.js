// Skills on the agent page (docs/skills.md): the skills attached to the
// agent (GET /api/agents/{name}/skills), each with its description and
// files; admins attach one of the organisation's skills (PUT
// …/skills/{skill}), detach one after a confirmation (DELETE
// …/skills/{skill}), and add a skill from a .zip (POST /api/skills, then
// attached here).
import { h, errorBox, confirm, replace } from './dom.js';
import { t, tn } from './i18n.js';
import { size } from './attachments.js';

const enc = encodeURIComponent;

// MAX_ZIP_BYTES is the largest .zip a skill is added from (skill.MaxZipBytes).
export const MAX_ZIP_BYTES = 16 * 1024 * 1024;

// skillsSection is the agent's skills: its element and the first listing.
export function skillsSection(api, admin, agent) {
  const base = `/api/agents/${enc(agent)}/skills`;
  const status = h('div', { class: 'form-status', id: 'skills-status', 'aria-live': 'polite', tabindex: '-1' });
  const list = h('div', { id: 'skills-list' });
  const picker = h('select', { id: 'skills-pick', 'aria-label': t('skills.pickLabel') });
  const attach = h('button', { type: 'button', id: 'skills-attach', onclick: () => attachPicked() }, t('skills.attach'));
  const chooser = h('div', { class: 'skills-attach', id: 'skills-chooser', hidden: true }, picker, attach);
  const el = h('section', { class: 'skills', id: 'skills', 'aria-labelledby': 'skills-h' },
    h('h2', { id: 'skills-h' }, t('skills.title')),
    h('p', { class: 'muted' }, t('skills.lede')));

  const refresh = async () => {
    let attached;
    let all = [];
    try {
      attached = (await api.get(base))?.skills ?? [];
      if (admin) all = (await api.get('/api/skills'))?.skills ?? [];
    } catch (err) {
      replace(list, err.status === 501 ? h('p', { class: 'muted', id: 'skills-off' }, t('skills.off'))
        : errorBox(err, t('skills.notListed'), refresh));
      return;
    }
    show(attached);
    const names = new Set(attached.map((s) => s.name));
    const free = all.filter((s) => !names.has(s.name));
    replace(picker, ...free.map((s) => h('option', { value: s.name }, s.name)));
    chooser.hidden = !free.length;
  };

  const show = (skills) => {
    if (!skills.length) {
      replace(list, h('p', { class: 'muted', id: 'skills-none' }, t('skills.none')));
      return;
    }
    replace(list, h('ul', { class: 'skills-list', 'aria-label': t('skills.caption', { agent }) }, skills.map(item)));
  };

  const item = (s) => h('li', { 'data-skill': s.name },
    h('div', { class: 'skills-head' }, h('strong', { class: 'skill-name' }, s.name), ' ',
      h('span', { class: 'muted skill-files' }, tn('skills.files', s.file_count, { size: size(s.bytes) })),
      admin ? h('button', { type: 'button', class: 'danger small detach-skill', 'aria-label': t('skills.detachNamed', { name: s.name }),
        onclick: (e) => detach(s, e.currentTarget) }, t('skills.detach')) : null),
    h('p', { class: 'skill-description' }, s.description));

  const say = (node) => {
    replace(status, node);
    status.focus();
  };

  const attachPicked = async () => {
    const name = picker.value;
    if (!name) return;
    try {
      await api.put(`${base}/${enc(name)}`);
      await refresh();
      say(h('p', { class: 'ok' }, t('skills.attached', { name })));
    } catch (err) {
      say(errorBox(err, t('skills.notAttached')));
    }
  };

  const detach = async (s, button) => {
    if (!(await confirm(t('skills.detachQuestion', { name: s.name }), t('skills.detach')))) {
      button.focus();
      return;
    }
    try {
      await api.del(`${base}/${enc(s.name)}`);
      await refresh();
      say(h('p', { class: 'ok' }, t('skills.detached', { name: s.name })));
    } catch (err) {
      say(errorBox(err, t('skills.notDetached')));
    }
  };

  // add stores the skill of a .zip in the organisation and attaches it.
  const add = async (file) => {
    try {
      if (file.size > MAX_ZIP_BYTES) throw new Error(t('skills.tooLarge', { size: size(file.size), limit: size(MAX_ZIP_BYTES) }));
      const form = new FormData();
      form.append('file', file, file.name);
      const sk = await api.upload('/api/skills', form);
      await api.put(`${base}/${enc(sk.name)}`);
      await refresh();
      say(h('p', { class: 'ok' }, t('skills.added', { name: sk.name })));
    } catch (err) {
      say(h('p', { class: 'alert', role: 'alert' }, t('skills.notAdded', { name: file.name, reason: err.message })));
    }
  };

  if (admin) {
    const zip = h('input', { type: 'file', id: 'skills-input', accept: '.zip,application/zip', hidden: true, tabindex: '-1',
      onchange: () => {
        const f = zip.files[0];
        zip.value = '';
        if (f) add(f);
      } });
    const upload = h('button', { type: 'button', id: 'skills-add', class: 'primary', onclick: () => zip.click() }, t('skills.add'));
    el.append(h('div', { class: 'skills-controls' }, chooser, upload, zip));
  }
  el.append(status, list);
  refresh();
  return el;
}
