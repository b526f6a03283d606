package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

func (s *server) settingsRoutes() {
	tags := []string{"settings"}
	register(s, huma.Operation{
		OperationID: "get-settings", Method: http.MethodGet, Path: "/api/settings", Tags: tags,
		Summary: "The organisation's settings",
		Description: "Feature switches, network mode, web engines, and for every key Quiver knows whether it is set " +
			"and where from; never a key's value.",
	}, adminOnly, s.getSettings)
	register(s, huma.Operation{
		OperationID: "put-settings", Method: http.MethodPut, Path: "/api/settings", Tags: tags,
		Summary: "Replace the organisation's settings",
		Description: "One write. version must be the version read: a stale one is 409 conflict and writes nothing (read " +
			"again and reapply). Keys are write-only: set_keys sets, clear_keys removes, others keep their value. " +
			"A bad field is 400 and writes nothing. Returns the settings now in force.",
		Errors: []int{http.StatusConflict},
	}, adminOnly, s.putSettings)
}

type settingsOutput struct{ Body Settings }

type putSettingsInput struct{ Body SettingsUpdate }

func (s *server) getSettings(ctx context.Context, _ *struct{}) (*settingsOutput, error) {
	a := authFrom(ctx)
	st, err := s.eng.Settings(ctx, a.Caller)
	if err != nil {
		return nil, err
	}
	return &settingsOutput{Body: settingsView(st)}, nil
}

func (s *server) putSettings(ctx context.Context, in *putSettingsInput) (*settingsOutput, error) {
	a := authFrom(ctx)
	st, err := s.eng.UpdateSettings(ctx, a.Caller, in.Body)
	if err != nil {
		return nil, err
	}
	return &settingsOutput{Body: settingsView(st)}, nil
}

// settingsView fills nil lists and maps so that clients always get [] and
// {}, never null.
func settingsView(st Settings) Settings {
	if st.Switches == nil {
		st.Switches = map[string]bool{}
	}
	if st.SwitchNames == nil {
		st.SwitchNames = []string{}
	}
	if st.SwitchInfo == nil {
		st.SwitchInfo = []SwitchInfo{}
	}
	for i := range st.SwitchInfo {
		if st.SwitchInfo[i].Tools == nil {
			st.SwitchInfo[i].Tools = []string{}
		}
	}
	if st.NetworkModes == nil {
		st.NetworkModes = []string{}
	}
	if st.Keys == nil {
		st.Keys = []KeyState{}
	}
	if st.Web.ExcludeProviders == nil {
		st.Web.ExcludeProviders = []string{}
	}
	return st
}
