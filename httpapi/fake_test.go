package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/settings"
)

// fakeCatalog is the catalog the fake engine lists.
var fakeCatalog = httpapi.Catalog{
	Tools:           []httpapi.ToolView{{Name: "calculate", Family: "calc", Description: "Evaluates arithmetic.", Access: "read", AlwaysOn: true, Chars: 120}},
	AlwaysPaidChars: 120, AlwaysPaidCeiling: 4000, WidestChars: 120, WidestCeiling: 20000,
}

func (f *fakeEngine) Catalog(_ context.Context, c httpapi.Caller) (httpapi.Catalog, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.catalogCallers = append(f.catalogCallers, c)
	return fakeCatalog, nil
}

// fakeKeys are the key names the fake's settings know.
var fakeKeys = []settings.KeyState{
	{Name: "openai_api_key", Label: "OpenAI API key"},
	{Name: "brave_api_key", Label: "Brave Search API key"},
}

// fakeSettings are one organisation's settings in the fake engine.
type fakeSettings struct {
	version int64
	update  settings.Update // without keys
	keys    map[string]string
}

// orgSettings returns the organisation's settings; f.mu is held.
func (f *fakeEngine) orgSettings(orgID string) *fakeSettings {
	if f.settings == nil {
		f.settings = map[string]*fakeSettings{}
	}
	st := f.settings[orgID]
	if st == nil {
		st = &fakeSettings{update: settings.Update{NetworkMode: "public"}, keys: map[string]string{}}
		f.settings[orgID] = st
	}
	return st
}

func (st *fakeSettings) view() settings.View {
	v := settings.View{
		Version: st.version, Switches: st.update.Switches, SwitchNames: []string{"intent", "web"},
		NetworkMode: st.update.NetworkMode, NetworkModes: []string{"public", "self-hosted"}, Web: st.update.Web,
	}
	for _, k := range fakeKeys {
		if _, ok := st.keys[k.Name]; ok {
			k.Set, k.Source = true, "settings"
		}
		v.Keys = append(v.Keys, k)
	}
	if st.version > 0 {
		v.UpdatedAt = start
	}
	return v
}

func (f *fakeEngine) Settings(_ context.Context, c httpapi.Caller) (settings.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.orgSettings(c.OrgID).view(), nil
}

// UpdateSettings refuses a stale version, unknown switches and keys, and
// a SearXNG URL that is not http(s); the switch "boom" is an internal
// error.
func (f *fakeEngine) UpdateSettings(_ context.Context, c httpapi.Caller, u settings.Update) (settings.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.orgSettings(c.OrgID)
	if u.Version != st.version {
		return settings.View{}, settings.ErrConflict
	}
	if u.Switches["boom"] {
		return settings.View{}, errors.New(secretDetail)
	}
	for name := range u.Switches {
		if name != "intent" && name != "web" {
			return settings.View{}, &settings.InvalidError{Field: "switches", Msg: "unknown switch " + name}
		}
	}
	known := func(name string) bool {
		return slices.ContainsFunc(fakeKeys, func(k settings.KeyState) bool { return k.Name == name })
	}
	for _, name := range append(slices.Collect(maps.Keys(u.SetKeys)), u.ClearKeys...) {
		if !known(name) {
			return settings.View{}, &settings.InvalidError{Msg: "unknown key " + name}
		}
	}
	if w := u.Web.SearXNGURL; w != "" && !strings.HasPrefix(w, "http://") && !strings.HasPrefix(w, "https://") {
		return settings.View{}, &settings.InvalidError{Field: "web.searxng_url", Msg: "not an http(s) URL"}
	}
	maps.Copy(st.keys, u.SetKeys)
	for _, name := range u.ClearKeys {
		delete(st.keys, name)
	}
	u.SetKeys, u.ClearKeys = nil, nil
	st.update, st.version = u, st.version+1
	return st.view(), nil
}

// toolRunCall is one RunTool the fake saw.
type toolRunCall struct {
	Caller      httpapi.Caller
	Agent, Tool string
	Args        string
}

// RunTool runs "calculate" ({"expression"}: "2" for 1+1), "fail" (a
// failed run), "boom" (an internal error) and "block" (sends its context
// to toolRunning, waits for it to end, sends its error to blocked and
// returns it); any other tool is not in the toolset.
func (f *fakeEngine) RunTool(ctx context.Context, c httpapi.Caller, agentName, tool string, args json.RawMessage) (httpapi.ToolRun, error) {
	f.mu.Lock()
	f.runs = append(f.runs, toolRunCall{Caller: c, Agent: agentName, Tool: tool, Args: string(args)})
	f.mu.Unlock()
	switch tool {
	case "calculate":
		var in struct{ Expression string }
		if err := json.Unmarshal(args, &in); err != nil || in.Expression == "" {
			return httpapi.ToolRun{Tool: tool, Result: "expression is required", IsError: true, DurationMS: 1}, nil
		}
		result := "?"
		if in.Expression == "1+1" {
			result = "2"
		}
		return httpapi.ToolRun{Tool: tool, Result: result, DurationMS: 3}, nil
	case "fail":
		return httpapi.ToolRun{Tool: tool, Result: "the tool failed", IsError: true, DurationMS: 1}, nil
	case "boom":
		return httpapi.ToolRun{}, errors.New(secretDetail)
	case "block":
		f.toolRunning <- ctx
		<-ctx.Done()
		f.blocked <- ctx.Err()
		return httpapi.ToolRun{}, ctx.Err()
	}
	return httpapi.ToolRun{}, &httpapi.BadRequest{Msg: "tool " + tool + " is not in the toolset of agent " + agentName}
}

func (f *fakeEngine) lastRun() (toolRunCall, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.runs) == 0 {
		return toolRunCall{}, false
	}
	return f.runs[len(f.runs)-1], true
}

// fakeConsoleTools are what ConsoleTools lists for "helper"; other agents
// have none.
var fakeConsoleTools = []httpapi.ConsoleTool{
	{Name: "calculate", Family: "calc", Description: "Evaluates arithmetic.", Access: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)},
	{Name: "fail", Family: "test", Description: "Always fails.", Access: "read", InputSchema: json.RawMessage(`{"type":"object"}`)},
}

func (f *fakeEngine) ConsoleTools(_ context.Context, c httpapi.Caller, agentName string) ([]httpapi.ConsoleTool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.consoleCallers = append(f.consoleCallers, c)
	if agentName == "helper" {
		return fakeConsoleTools, nil
	}
	return nil, nil
}

// ModelStatus: "helper" is connected, every other agent is not.
func (f *fakeEngine) ModelStatus(_ context.Context, _ httpapi.Caller, agentName string) (httpapi.ModelStatus, error) {
	if agentName == "helper" {
		return httpapi.ModelStatus{Model: "fake:model", Connected: true}, nil
	}
	return httpapi.ModelStatus{Model: "openai:gpt-5-mini", Help: "Set the OpenAI API key in Settings, or start Ollama on this machine."}, nil
}

// fakeModels are the models the fake offers: "helper" runs on
// fake:model and offers fake:big (connected) and fake:gone (not); every
// other agent offers its own alone, connected.
func fakeModels(agentName string) []engine.ModelChoice {
	if agentName != "helper" {
		return []engine.ModelChoice{{Ref: "fake:" + agentName, Default: true, Connected: true}}
	}
	return []engine.ModelChoice{
		{Ref: "fake:model", Default: true, Connected: true},
		{Ref: "fake:big", Connected: true},
		{Ref: "fake:gone", Help: "no model is connected: provider \"fake\" has no key for gone"},
	}
}

// ModelChoices: fakeModels.
func (f *fakeEngine) ModelChoices(_ context.Context, _ httpapi.Caller, agentName string) ([]engine.ModelChoice, error) {
	return fakeModels(agentName), nil
}

// CheckModel: a connected model of fakeModels.
func (f *fakeEngine) CheckModel(_ context.Context, _ httpapi.Caller, agentName, ref string) error {
	for _, c := range fakeModels(agentName) {
		if c.Ref == ref && c.Connected {
			return nil
		}
		if c.Ref == ref {
			return &engine.InputError{Msg: c.Help}
		}
	}
	return &engine.InputError{Msg: "model " + ref + " is not one the agent offers"}
}

// TestConnection: the real test lives in package settings; the fake
// answers a settings-shaped refusal, so that tests of the fake's other
// endpoints stay complete.
func (f *fakeEngine) TestConnection(context.Context, httpapi.Caller, settings.ConnectionTest) (settings.ConnectionReport, error) {
	return settings.ConnectionReport{}, &settings.ConnectionError{Msg: "the fake engine tests no connection"}
}

// InspectDraft answers for an agent stored in the caller's organisation
// (another organisation's is unknown, a *BadRequest), as a draft: no
// turn id.
func (f *fakeEngine) InspectDraft(ctx context.Context, c httpapi.Caller, agentName, message string) (httpapi.Inspection, error) {
	if _, err := f.st.GetAgent(ctx, c.OrgID, agentName); err != nil {
		return httpapi.Inspection{}, &httpapi.BadRequest{Msg: fmt.Sprintf("no agent named %q", agentName)}
	}
	return httpapi.Inspection{
		Agent: agentName, Model: "fake:model", System: "You help.",
		Context: "caller " + c.UserID + " in " + c.Timezone + ": " + message,
	}, nil
}
