// Scheduled (every signed-in user): the reminders and recurring tasks
// you asked agents for (GET /api/tasks), due first, each paused,
// resumed, edited (title, instruction, a new schedule) or cancelled
// after a confirmation (PATCH and DELETE /api/tasks/{id}). Admins also
// see the organisation's tasks (?all=true), in a second section, where
// they may pause, resume or cancel anyone's.
import { h, heading, errorBox, when, confirm, replace } from './dom.js';
import { t } from './i18n.js';

const enc = encodeURIComponent;

// Bounds of a task (store.MaxTaskInstructionRunes, MaxTaskTitleRunes).
const MAX_INSTRUCTION = 4000;
const MAX_TITLE = 120;

export async function render({ api, me, main }) {
  main.append(heading(t('scheduled.title')), h('p', { class: 'lede' }, t('scheduled.lede')));
  const status = h('div', { class: 'form-status', id: 'scheduled-status', 'aria-live': 'polite', tabindex: '-1' });
  main.append(status);
  const sections = [section(api, me, status, 'mine')];
  if (me.role === 'admin') sections.push(section(api, me, status, 'all'));
  for (const s of sections) main.append(s.el);
  const refreshAll = () => Promise.all(sections.map((s) => s.refresh()));
  for (const s of sections) s.onChange = refreshAll;
  await refreshAll();
}

// words are a section's own texts (literal keys, which the catalog
// tests read).
function words(scope) {
  return scope === 'all'
    ? { heading: t('scheduled.heading.all'), none: t('scheduled.none.all') }
    : { heading: t('scheduled.heading.mine'), none: t('scheduled.none.mine') };
}

// section is one list of tasks; refresh lists it again.
function section(api, me, status, scope) {
  const id = `scheduled-${scope}`;
  const w = words(scope);
  const list = h('div', { id: `${id}-list` });
  const el = h('section', { class: 'scheduled', id, 'aria-labelledby': `${id}-h` }, h('h2', { id: `${id}-h` }, w.heading), list);
  const s = { el, onChange: null };
  s.refresh = async () => {
    let tasks;
    try {
      tasks = (await api.get(scope === 'all' ? '/api/tasks?all=true' : '/api/tasks'))?.tasks ?? [];
    } catch (err) {
      replace(list, errorBox(err, t('scheduled.notListed')));
      return;
    }
    if (scope === 'all') tasks = tasks.filter((x) => x.user_id !== me.user_id);
    if (!tasks.length) {
      replace(list, h('p', { class: 'muted', id: `${id}-none` }, w.none));
      return;
    }
    replace(list, h('ul', { class: 'task-list' }, tasks.map((task) => item(api, me, status, task, () => s.onChange()))));
  };
  return s;
}

// stateText is a task's state in words.
function stateText(state) {
  switch (state) {
    case 'paused': return t('scheduled.state.paused');
    case 'done': return t('scheduled.state.done');
    default: return t('scheduled.state.active');
  }
}

// lastText says how the last run went.
function lastText(task) {
  if (!task.last_status) return t('scheduled.neverRan');
  const at = when(task.last_run_at);
  switch (task.last_status) {
    case 'failed': return t('scheduled.lastFailed', { when: at, why: task.last_error ?? '' });
    case 'skipped': return t('scheduled.lastSkipped', { when: at, why: task.last_error ?? '' });
  }
  return task.last_late_seconds
    ? t('scheduled.lastLate', { when: at, minutes: Math.round(task.last_late_seconds / 60) })
    : t('scheduled.lastOK', { when: at });
}

// item is one task with its actions, or, while edited, its form.
function item(api, me, status, task, changed) {
  const li = h('li', { class: 'task', 'data-task': task.id });
  const own = task.user_id === me.user_id;
  const act = async (what, fn, done) => {
    replace(status);
    try {
      await fn();
      status.append(h('p', { class: 'ok' }, done));
    } catch (err) {
      status.append(errorBox(err, what));
    }
    await changed();
    status.focus();
  };
  const setState = (state) => act(t('scheduled.notSaved', { title: task.title }),
    () => api.patch(`/api/tasks/${enc(task.id)}`, { version: task.version, state }),
    state === 'paused' ? t('scheduled.pausedNamed', { title: task.title }) : t('scheduled.resumedNamed', { title: task.title }));
  const show = () => {
    const buttons = [];
    if (task.state === 'active') {
      buttons.push(h('button', { type: 'button', class: 'pause-task', 'aria-label': t('scheduled.pauseNamed', { title: task.title }),
        onclick: () => setState('paused') }, t('scheduled.pause')));
    } else if (task.state === 'paused') {
      buttons.push(h('button', { type: 'button', class: 'resume-task', 'aria-label': t('scheduled.resumeNamed', { title: task.title }),
        onclick: () => setState('active') }, t('scheduled.resume')));
    }
    if (own) {
      buttons.push(h('button', { type: 'button', class: 'edit-task', 'aria-label': t('scheduled.editNamed', { title: task.title }),
        onclick: editing }, t('scheduled.edit')));
    }
    const cancel = h('button', { type: 'button', class: 'danger cancel-task', 'aria-label': t('scheduled.cancelNamed', { title: task.title }) },
      t('scheduled.cancel'));
    cancel.addEventListener('click', async () => {
      if (!(await confirm(t('scheduled.cancelQuestion', { title: task.title }), t('scheduled.cancel')))) {
        cancel.focus();
        return;
      }
      await act(t('scheduled.notCancelled', { title: task.title }), () => api.del(`/api/tasks/${enc(task.id)}`),
        t('scheduled.cancelledNamed', { title: task.title }));
    });
    buttons.push(cancel);
    replace(li,
      h('h3', { class: 'task-title' }, task.title || task.instruction),
      h('p', { class: 'task-when' }, h('span', { class: 'task-state' }, stateText(task.state)), ' · ',
        h('span', { class: 'task-schedule' }, task.schedule),
        task.state === 'active' && task.next_run_at ? [' · ', h('span', { class: 'task-next' }, t('scheduled.next', { when: when(task.next_run_at) }))] : null),
      h('p', { class: 'task-instruction' }, task.instruction),
      h('p', { class: 'muted small task-last' }, lastText(task)),
      own ? null : h('p', { class: 'muted small' }, t('scheduled.owner', { user: task.user_id })),
      h('div', { class: 'row actions' }, buttons));
  };
  const editing = () => {
    const p = `task-${task.id}`;
    const title = h('input', { id: `${p}-title`, maxlength: MAX_TITLE, value: task.title });
    const instruction = h('textarea', { id: `${p}-instruction`, rows: 3, maxlength: MAX_INSTRUCTION }, task.instruction);
    const kind = h('select', { id: `${p}-kind` },
      h('option', { value: '' }, t('scheduled.keepSchedule')),
      h('option', { value: 'at' }, t('scheduled.kind.at')),
      h('option', { value: 'in' }, t('scheduled.kind.in')),
      h('option', { value: 'every' }, t('scheduled.kind.every')),
      h('option', { value: 'cron' }, t('scheduled.kind.cron')));
    const value = h('input', { id: `${p}-value`, maxlength: 200, 'aria-describedby': `${p}-hint` });
    const said = h('div', { class: 'form-status', 'aria-live': 'polite' });
    const save = h('button', { type: 'submit', class: 'primary save-task' }, t('common.save'));
    const back = h('button', { type: 'button', class: 'cancel' }, t('common.cancel'));
    const form = h('form', { class: 'task-form' },
      h('label', { for: `${p}-title` }, t('scheduled.titleLabel')), title,
      h('label', { for: `${p}-instruction` }, t('scheduled.instruction')), instruction,
      h('label', { for: `${p}-kind` }, t('scheduled.newSchedule')), kind,
      h('label', { for: `${p}-value` }, t('scheduled.when')), value,
      h('p', { class: 'muted small', id: `${p}-hint` }, t('scheduled.hint')),
      h('div', { class: 'row' }, save, back), said);
    back.addEventListener('click', () => {
      show();
      li.querySelector('.edit-task')?.focus();
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      replace(said);
      const body = { version: task.version };
      if (title.value.trim() !== task.title) body.title = title.value;
      if (instruction.value.trim() !== task.instruction) body.instruction = instruction.value;
      if (kind.value) body[kind.value] = value.value;
      save.disabled = true;
      try {
        task = await api.patch(`/api/tasks/${enc(task.id)}`, body);
        show();
        status.replaceChildren(h('p', { class: 'ok' }, t('scheduled.saved', { title: task.title })));
        li.querySelector('.edit-task')?.focus();
      } catch (err) {
        said.append(errorBox(err, t('scheduled.notSaved', { title: task.title })));
        save.disabled = false;
      }
    });
    replace(li, form);
    title.focus();
  };
  show();
  return li;
}
