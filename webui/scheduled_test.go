package webui_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/browsertest"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// putTask stores an active task of user in org_a's conversation conv_s.
func putTask(t *testing.T, st store.Store, user, id, title string, kind, spec string, every time.Duration, due time.Time) {
	t.Helper()
	now := clock.Now().UTC()
	if _, err := st.CreateTask(context.Background(), store.Task{OrgID: "org_a", ID: id, UserID: user, Agent: "assistant",
		ConversationID: "conv_s", Title: title, Instruction: "Remind them: " + title + ".", Kind: kind, Spec: spec, Every: every,
		Timezone: "Europe/Paris", State: store.TaskActive, NextRunAt: due, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// taskTitles are the titles a section lists, in order.
func (b *browser) taskTitles(scope string) []string {
	b.t.Helper()
	return eval[[]string](b, `Array.from(document.querySelectorAll('#scheduled-`+scope+` li.task .task-title'), (h) => h.textContent)`)
}

// TestScheduledPausesEditsCancels: over the real API, Ana (an admin)
// sees her tasks due first and, apart, Bruno's; she pauses and resumes
// one, edits its title and schedule, is refused a schedule too frequent
// with the API's reason and nothing changed, pauses Bruno's, and cancels
// one of hers after a confirmation. The page passes axe in both themes.
func TestScheduledPausesEditsCancels(t *testing.T) {
	st, _, b := realAPI(t)
	ctx := context.Background()
	now := clock.Now().UTC()
	if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	putTask(t, st, "ana", "task_stretch", "Stretch", store.ScheduleInterval, "", 3*time.Hour, now.Add(time.Hour))
	putTask(t, st, "ana", "task_news", "Friday news", store.ScheduleCron, "0 18 * * 5", 0, now.Add(48*time.Hour))
	putTask(t, st, "bruno", "task_water", "Water the plants", store.ScheduleCron, "0 9 * * *", 0, now.Add(2*time.Hour))

	b.open("#/scheduled", `#scheduled-mine li[data-task="task_stretch"]`)
	b.Do("others listed", chromedp.WaitVisible(chromedp.CSS(`#scheduled-all li[data-task="task_water"]`)))
	if d := cmp.Diff([]string{"Stretch", "Friday news"}, b.taskTitles("mine")); d != "" {
		t.Errorf("Ana's tasks (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Water the plants"}, b.taskTitles("all")); d != "" {
		t.Errorf("the others' tasks (-want +got):\n%s", d)
	}
	b.WaitText(`#scheduled-mine li[data-task="task_stretch"] .task-schedule`, "every 3h")
	browsertest.RequireAxe(t)
	a := newAuditor(t, b, widths[0])
	a.check("scheduled", true)

	// Pause and resume.
	li := `#scheduled-mine li[data-task="task_stretch"]`
	b.Do("pause", chromedp.Click(chromedp.CSS(li+` button.pause-task`)), chromedp.WaitVisible(chromedp.CSS(li+` button.resume-task`)))
	b.WaitText(`#scheduled-status .ok`, "Paused “Stretch”.")
	if tk, _ := st.GetTask(ctx, "org_a", "task_stretch"); tk.State != store.TaskPaused {
		t.Errorf("stored state after pause: %s", tk.State)
	}
	b.Do("resume", chromedp.Click(chromedp.CSS(li+` button.resume-task`)), chromedp.WaitVisible(chromedp.CSS(li+` button.pause-task`)))

	// A schedule too frequent is refused with the reason; nothing changes.
	b.Do("edit", chromedp.Click(chromedp.CSS(li+` button.edit-task`)), chromedp.WaitVisible(chromedp.CSS(`#task-task_stretch-title`)))
	a.check("scheduled-edit", false)
	b.Do("too often", chromedp.SetValue(chromedp.CSS(`#task-task_stretch-kind`), "cron"),
		chromedp.SetValue(chromedp.CSS(`#task-task_stretch-value`), "* * * * *"),
		chromedp.Click(chromedp.CSS(li+` button.save-task`)))
	b.WaitText(li+` .alert`, "tasks run at most every 5m0s")
	if tk, _ := st.GetTask(ctx, "org_a", "task_stretch"); tk.Kind != store.ScheduleInterval {
		t.Errorf("a refused edit changed the schedule to %s", tk.Kind)
	}
	b.Do("good edit", chromedp.SetValue(chromedp.CSS(`#task-task_stretch-title`), "Stretch and walk"),
		chromedp.SetValue(chromedp.CSS(`#task-task_stretch-kind`), "every"),
		chromedp.SetValue(chromedp.CSS(`#task-task_stretch-value`), "2h"),
		chromedp.Click(chromedp.CSS(li+` button.save-task`)), chromedp.WaitVisible(chromedp.CSS(li+` button.edit-task`)))
	b.WaitText(li+` .task-schedule`, "every 2h")
	if tk, _ := st.GetTask(ctx, "org_a", "task_stretch"); tk.Title != "Stretch and walk" || tk.Every != 2*time.Hour {
		t.Errorf("stored after the edit: %q every %v", tk.Title, tk.Every)
	}

	// Bruno's: the admin pauses it, and has no Edit.
	other := `#scheduled-all li[data-task="task_water"]`
	if eval[bool](b, `!!document.querySelector('`+other+` button.edit-task')`) {
		t.Error("an admin is offered to edit another person's task")
	}
	b.Do("pause Bruno's", chromedp.Click(chromedp.CSS(other+` button.pause-task`)), chromedp.WaitVisible(chromedp.CSS(other+` button.resume-task`)))

	// Cancel, after a confirmation.
	news := `#scheduled-mine li[data-task="task_news"]`
	b.Do("cancel", chromedp.Click(chromedp.CSS(news+` button.cancel-task`)))
	b.confirmDialog("Cancel the task “Friday news”?", "no")
	if _, err := st.GetTask(ctx, "org_a", "task_news"); err != nil {
		t.Fatalf("kept task deleted: %v", err)
	}
	b.Do("cancel", chromedp.Click(chromedp.CSS(news+` button.cancel-task`)))
	b.confirmDialog("Cancel the task “Friday news”?", "yes")
	b.Do("gone", chromedp.WaitNotPresent(chromedp.CSS(news)))
	b.WaitText(`#scheduled-status .ok`, "Cancelled “Friday news”.")
	if _, err := st.GetTask(ctx, "org_a", "task_news"); err == nil {
		t.Error("the cancelled task is still stored")
	}
	b.Shot("scheduled")
}
