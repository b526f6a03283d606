package intent

import (
	"strings"

	"github.com/quiverhq/quiver/tool"
)

// Targets: the families Deliberate Tool Mode opens.
const (
	Search        = "search"
	Reminder      = "reminder"
	Memory        = "memory"
	Image         = "image"
	Video         = "video"
	Voice         = "voice"
	MediaAnalysis = "media-analysis"
	MessageAction = "message-action"
	CrossChannel  = "cross-channel"
	Thread        = "thread"
	UserBlocking  = "user-blocking"
	UserInfo      = "user-info"
	Capabilities  = "capabilities"
	Calculator    = "calculator"
	Files         = "files"
	// Knowledge is the agent's documents, Attachments the files of this
	// conversation, Budget what has been spent and is left, History the
	// person's earlier conversations.
	Knowledge   = "knowledge"
	Attachments = "attachments"
	Budget      = "budget"
	History     = "history"
	// Code runs model-written code (run_code), Artifacts makes and
	// checks documents a person keeps, Skills loads one of the agent's
	// skills, Discovery finds tools among the agent's own.
	Code      = "code"
	Artifacts = "artifacts"
	Skills    = "skills"
	Discovery = "discovery"
	// Apps is the tools of an organisation's general MCP servers. No pack
	// opens it: a community opens it with custom triggers (or "^").
	Apps = "apps"
)

// Targets lists every target in documentation order.
var Targets = []string{
	Search, Reminder, Memory, Image, Video, Voice, MediaAnalysis, MessageAction,
	CrossChannel, Thread, UserBlocking, UserInfo, Capabilities, Calculator, Files,
	Knowledge, Attachments, Budget, History, Code, Artifacts, Skills, Discovery, Apps,
}

// targetTools maps each target to the built-in tools it opens.
var targetTools = map[string][]string{
	// read_tool_result comes with the targets whose results are often
	// long enough to be stored and referenced; search_conversations
	// with memory too ("what did I tell you about…" asks to remember)
	// besides its own history family.
	Search:        {"web_search", "fetch_url", "research_web", "read_tool_result"},
	Reminder:      {"schedule_task", "update_scheduled_task"},
	Memory:        {"save_memory", "update_memory", "forget_memory", "search_memory", "update_short_term_memory", "search_conversations"},
	Image:         {"generate_image", "generate_anime_image"},
	Video:         {"generate_video"},
	Voice:         {"send_voice_message"},
	MediaAnalysis: {"analyze_image", "view_profile_picture", "analyze_youtube_video", "read_document", "search_attachments"},
	MessageAction: {"interact_with_message", "manage_message", "message_metadata"},
	CrossChannel:  {"cross_channel_message"},
	Thread:        {"create_thread"},
	UserBlocking:  {"block_user", "unblock_user"},
	UserInfo:      {"update_user_info"},
	// The URL reader comes with capabilities, so the model can read
	// Quiver's own documentation when asked what it can do.
	Capabilities: {"review_capabilities", "fetch_url"},
	Calculator:   {"calculate"},
	Files:        {"list_files", "search_files", "read_file", "write_file", "edit_file", "delete_file", "read_tool_result"},
	// read_document reads both knowledge documents and attachments.
	Knowledge:   {"search_knowledge", "read_document"},
	Attachments: {"read_document", "search_attachments"},
	Budget:      {"check_budget"},
	History:     {"search_conversations"},
	// The checklist (update_tasks) comes with the two families of
	// many-step making, which plan with it; it is allowlisted like any
	// optional tool, so it is not one of the always-on helpers.
	Code:      {"run_code", "read_tool_result", "update_tasks"},
	Artifacts: {"create_artifact", "rewrite_artifact", "update_artifact", "save_artifact", "inspect_artifact", "measure_layout", "print_pdf", "update_tasks"},
	Skills:    {"load_skill"},
	// The discovery tools are never selected: the engine appends them
	// after the gated tools when this family is open (or when it defers
	// a large toolset), so they search the whole selection.
	Discovery: {"search_tools", "list_tools", "get_tool_schema"},
	Apps:      {},
}

// familyTargets maps tool families to targets, for tools not named in
// targetTools: MCP replacements of web_search and fetch_url carry those
// families.
var familyTargets = map[string]string{
	"web_search": Search,
	"url_fetch":  Search,
	"research":   Search,
	"workspace":  Files,
	"code":       Code,
}

// TargetTools returns the built-in tools a target opens.
func TargetTools(target string) []string { return append([]string(nil), targetTools[target]...) }

// toolTargets is the reverse of targetTools: tool name → targets.
var toolTargets = func() map[string][]string {
	m := map[string][]string{}
	for _, t := range Targets {
		for _, name := range targetTools[t] {
			m[name] = append(m[name], t)
		}
	}
	return m
}()

// familyTargetLists is familyTargets as TargetsOf answers it: the URL
// reader's family opens capabilities too (see targetTools). Shared, so
// that TargetsOf allocates nothing.
var familyTargetLists = func() map[string][]string {
	m := map[string][]string{}
	for fam, target := range familyTargets {
		m[fam] = []string{target}
	}
	m["url_fetch"] = append(m["url_fetch"], Capabilities)
	return m
}()

// appsTargets is what opens a general MCP server's tools.
var appsTargets = []string{Apps}

// TargetsOf returns the targets that open t: by its name, else by its
// family (an MCP server's replacement tools). Nil means no target opens it,
// so the mode declares it only as an always-on helper it keeps. The
// slice is shared by every caller: read it, never change it.
func TargetsOf(t *tool.Tool) []string {
	if ts, ok := toolTargets[t.Name()]; ok {
		return ts
	}
	if strings.HasPrefix(t.Family(), "mcp:") {
		return appsTargets
	}
	return familyTargetLists[t.Family()]
}

// validTarget reports whether name is a target.
func validTarget(name string) bool {
	_, ok := targetTools[name]
	return ok
}
