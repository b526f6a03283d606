package tmpl

import (
	"slices"
	"strings"
)

// Macro is a prompt macro: {Key} expands to the function name, in
// backticks, of the tool serving it this turn, or to Prose when no declared
// tool serves it, so a prompt never names a function the turn lacks.
type Macro struct {
	Key   string
	Tool  string // the built-in function that serves the macro by default
	Prose string
}

// macros is the fixed macro table. Dynamic macros (web search, URL reading)
// are served by their built-in tool unless Env.Macros names a replacement.
var macros = []Macro{
	{"capabilities_tool", "review_capabilities", "the capabilities review tool, which is not available right now"},
	{"memory_tool", "save_memory", "the long-term memory tool, which is not available right now"},
	{"memory_update_tool", "update_memory", "the long-term memory update tool, which is not available right now"},
	{"short_term_memory_tool", "update_short_term_memory", "the short-term memory tool, which is not available right now"},
	{"task_tool", "schedule_task", "the task scheduling tool, which is not available right now"},
	{"task_update_tool", "update_scheduled_task", "the task update tool, which is not available right now"},
	{"cross_channel_tool", "cross_channel_message", "the cross-channel message tool, which is not available right now"},
	{"create_thread_tool", "create_thread", "the thread creation tool, which is not available right now"},
	{"sticker_tool", "select_sticker", "the sticker tool, which is not available right now"},
	{"manage_message_tool", "manage_message", "the message management tool, which is not available right now"},
	{"pin_tool", "manage_message", "the message management tool, which is not available right now"},
	{"block_user_tool", "block_user", "the user blocking tool, which is not available right now"},
	{"unblock_user_tool", "unblock_user", "the user unblocking tool, which is not available right now"},
	{"message_interaction_tool", "interact_with_message", "the message interaction tool, which is not available right now"},
	{"profile_picture_tool", "view_profile_picture", "the profile picture tool, which is not available right now"},
	{"budget_tool", "check_budget", "the budget tool, which is not available right now"},
	{"document_tool", "read_document", "the document reading tool, which is not available right now"},
	{"message_metadata_tool", "message_metadata", "the message metadata tool, which is not available right now"},
	{"timestamp_refresh_tool", "message_metadata", "the message metadata tool, which is not available right now"},
	{"youtube_tool", "analyze_youtube_video", "the YouTube video tool, which is not available right now"},
	{"image_analysis_tool", "analyze_image", "the image analysis tool, which is not available right now"},
	{"image_generation_tool", "generate_image", "the image generation tool, which is not available right now"},
	{"anime_image_generation_tool", "generate_anime_image", "the anime image generation tool, which is not available right now"},
	{"voice_message_tool", "send_voice_message", "the voice message tool, which is not available right now"},
	{"user_info_tool", "update_user_info", "the user info tool, which is not available right now"},
	{"web_search_tool", "web_search", "the web search tool, which is not available right now"},
	{"image_search_tool", "web_search", "the image search tool, which is not available right now"},
	{"video_search_tool", "web_search", "the video search tool, which is not available right now"},
	{"news_search_tool", "web_search", "the news search tool, which is not available right now"},
	{"url_fetch_tool", "fetch_url", "the URL reading tool, which is not available right now"},
	{"url_metadata_tool", "fetch_url", "the URL metadata tool, which is not available right now"},
}

// KnownMacros returns a copy of the macro table, in documentation order.
func KnownMacros() []Macro { return slices.Clone(macros) }

var macroIndex = func() map[string]Macro {
	m := make(map[string]Macro, len(macros))
	for _, mc := range macros {
		m[mc.Key] = mc
	}
	return m
}()

// expand writes s with every known macro expanded; anything else in braces
// (JSON, unknown names) is left exactly as written. Expanded text is never
// scanned again.
func expand(b *strings.Builder, s string, env Env) {
	if strings.IndexByte(s, '{') < 0 {
		// No macro reference can match: skip the scan.
		b.WriteString(s)
		return
	}
	last := 0
	for from := 0; ; {
		m, found := nextMacroRef(s, from)
		if !found {
			break
		}
		from = m[1]
		out, ok := resolve(s[m[2]:m[3]], env)
		if !ok {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(out)
		last = m[1]
	}
	b.WriteString(s[last:])
}

// resolve returns what {key} becomes this turn, or ok false for a name that
// is not a macro.
func resolve(key string, env Env) (string, bool) {
	fn, inEnv := env.Macros[key]
	mc, inTable := macroIndex[key]
	switch {
	case !inEnv && !inTable:
		return "", false
	case !inEnv:
		fn = mc.Tool
	}
	if env.Tools[fn] {
		return "`" + fn + "`", true
	}
	if inTable {
		return mc.Prose, true
	}
	return "the " + strings.ReplaceAll(strings.TrimSuffix(key, "_tool"), "_", " ") + " tool, which is not available right now", true
}
