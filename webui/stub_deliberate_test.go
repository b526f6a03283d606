package webui_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The stub's Deliberate Tool Mode and profile endpoints, with httpapi's
// shapes and rules: the organisation's settings (gate_always_on, and
// classifier_shift with classifier_shift_default, left out of a PUT stay
// as they were) and custom triggers for
// admins (a trigger normalised before it is stored or removed, 409
// trigger_exists and trigger_limit, 400 for a bad target or phrase), and
// each user's own override and profile.

// stubTargets are intent.Targets.
var stubTargets = []string{
	"search", "reminder", "memory", "image", "video", "voice", "media-analysis", "message-action",
	"cross-channel", "thread", "user-blocking", "user-info", "capabilities", "calculator", "files",
	"knowledge", "attachments", "budget", "history", "apps",
}

const (
	stubMaxTriggers    = 16 // intent.MaxCustomPerTarget
	stubMaxTriggerLen  = 40 // intent.MaxCustomChars
	stubDefaultHistory = 4  // intent.DefaultHistoryTurns
)

type stubTrigger struct {
	Target string `json:"target"`
	Phrase string `json:"phrase"`
}

// stubDeliberate is the organisation's Deliberate Tool Mode and the
// signed-in user's own override.
type stubDeliberate struct {
	enabled  bool
	history  int // -1: the default
	gate     bool
	shift    *float64 // nil: the deployment's
	triggers []stubTrigger
	myMode   string
}

func newStubDeliberate() stubDeliberate {
	return stubDeliberate{
		history:  -1,
		triggers: []stubTrigger{{"search", "look it up"}, {"image", "pfp"}, {"image", "^"}},
		myMode:   "follow",
	}
}

func (s *stubAPI) routeDeliberate(api func(string, http.HandlerFunc)) {
	api("GET /api/deliberate", s.admin(s.getDeliberate))
	api("PUT /api/deliberate", s.admin(s.putDeliberate))
	api("POST /api/deliberate/triggers", s.admin(s.addTrigger))
	api("DELETE /api/deliberate/triggers", s.admin(s.removeTrigger))
	api("GET /api/me/deliberate", s.getMyDeliberate)
	api("PUT /api/me/deliberate", s.putMyDeliberate)
	api("PATCH /api/me", s.patchMe)
}

// deliberateView is GET /api/deliberate; the caller holds s.mu.
func (s *stubAPI) deliberateView() map[string]any {
	return map[string]any{
		"enabled": s.dtm.enabled, "history_turns": s.dtm.history, "default_history_turns": stubDefaultHistory,
		"gate_always_on": s.dtm.gate, "classifier_shift": s.dtm.shift,
		"targets": stubTargets, "max_triggers_per_target": stubMaxTriggers, "triggers": slices.Clone(s.dtm.triggers),
	}
}

func (s *stubAPI) getDeliberate(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.deliberateView())
}

func (s *stubAPI) putDeliberate(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	enabled, okE := b["enabled"].(bool)
	history, okH := b["history_turns"].(float64)
	if !okE || !okH || history != float64(int(history)) || history < -1 || history > 10 {
		writeErr(w, http.StatusBadRequest, "invalid_request", "validation failed: body.history_turns: expected an integer from -1 to 10")
		return
	}
	gate, okG := b["gate_always_on"].(bool)
	if _, set := b["gate_always_on"]; set && !okG {
		writeErr(w, http.StatusBadRequest, "invalid_request", "validation failed: body.gate_always_on: expected boolean")
		return
	}
	shift, okS := b["classifier_shift"].(float64)
	_, setS := b["classifier_shift"]
	def, _ := b["classifier_shift_default"].(bool)
	if (setS && (!okS || shift < -0.5 || shift > 0.5)) || (okS && def) {
		writeErr(w, http.StatusBadRequest, "invalid_request", "classifier shift: use a number from -0.5 to 0.5, or classifier_shift_default")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dtm.enabled, s.dtm.history = enabled, int(history)
	if okG { // left out: unchanged
		s.dtm.gate = gate
	}
	switch { // both left out: unchanged
	case def:
		s.dtm.shift = nil
	case okS:
		s.dtm.shift = &shift
	}
	writeJSON(w, http.StatusOK, s.deliberateView())
}

// checkTrigger is intent.CheckCustom, with a simpler normalisation: trim,
// collapse spaces, lower-case.
func checkTrigger(target, phrase string) (string, error) {
	if !slices.Contains(stubTargets, target) {
		return "", fmt.Errorf("unknown target %q", target)
	}
	p := strings.ToLower(strings.Join(strings.Fields(phrase), " "))
	switch {
	case p == "":
		return "", fmt.Errorf("empty phrase")
	case p == "^":
		return p, nil
	case strings.ContainsAny(p, `\^$.|?+()[]{}`):
		return "", fmt.Errorf("phrase %q holds regular expression syntax (one of %s); phrases are literal", phrase, `\^$.|?+()[]{}`)
	case utf8.RuneCountInString(p) > stubMaxTriggerLen:
		return "", fmt.Errorf("trigger %q: at most %d characters", phrase, stubMaxTriggerLen)
	}
	return p, nil
}

func (s *stubAPI) addTrigger(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	target := str(b, "target")
	phrase, err := checkTrigger(target, str(b, "phrase"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := stubTrigger{target, phrase}
	switch {
	case slices.Contains(s.dtm.triggers, t):
		writeErr(w, http.StatusConflict, "trigger_exists", fmt.Sprintf("%q is already a %s trigger", phrase, target))
	case len(s.triggersOf(target)) >= stubMaxTriggers:
		writeErr(w, http.StatusConflict, "trigger_limit", fmt.Sprintf("%s already has %d custom triggers (the limit)", target, stubMaxTriggers))
	default:
		s.dtm.triggers = append(s.dtm.triggers, t)
		writeJSON(w, http.StatusCreated, t)
	}
}

// triggersOf lists a target's phrases; the caller holds s.mu.
func (s *stubAPI) triggersOf(target string) []string {
	var out []string
	for _, t := range s.dtm.triggers {
		if t.Target == target {
			out = append(out, t.Phrase)
		}
	}
	return out
}

func (s *stubAPI) removeTrigger(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	phrase, err := checkTrigger(q.Get("target"), q.Get("phrase"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.dtm.triggers, stubTrigger{q.Get("target"), phrase})
	if i < 0 {
		writeErr(w, http.StatusNotFound, "not_found", fmt.Sprintf("no %s trigger %q", q.Get("target"), phrase))
		return
	}
	s.dtm.triggers = slices.Delete(s.dtm.triggers, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

func (s *stubAPI) getMyDeliberate(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"mode": s.dtm.myMode})
}

func (s *stubAPI) putMyDeliberate(w http.ResponseWriter, r *http.Request) {
	mode := str(body(r), "mode")
	if !slices.Contains([]string{"off", "follow", "on"}, mode) {
		writeErr(w, http.StatusBadRequest, "invalid_request", "validation failed: body.mode: expected value to be one of \"off, follow, on\"")
		return
	}
	s.mu.Lock()
	s.dtm.myMode = mode
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"mode": mode})
}

// patchMe changes the signed-in user's own profile (never the role) and
// answers as GET /api/me.
func (s *stubAPI) patchMe(w http.ResponseWriter, r *http.Request) {
	b := body(r)
	if v, ok := b["display_name"].(string); ok && strings.TrimSpace(v) == "" {
		writeErr(w, http.StatusBadRequest, "invalid_request", "display_name must not be blank")
		return
	}
	if v, ok := b["timezone"].(string); ok && strings.TrimSpace(v) != "" {
		if _, err := time.LoadLocation(strings.TrimSpace(v)); err != nil {
			writeErr(w, http.StatusBadRequest, "bad_timezone", "timezone: "+err.Error())
			return
		}
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.users, func(u stubUser) bool { return u.ID == stubMe })
	u := &s.users[i]
	for k, p := range map[string]*string{"display_name": &u.DisplayName, "department": &u.Department, "timezone": &u.Timezone} {
		if v, ok := b[k].(string); ok {
			*p = strings.TrimSpace(v)
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.meView(r))
}
