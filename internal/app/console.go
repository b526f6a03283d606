package app

// consoleConversation is the conversation a user's console runs are
// recorded under: one per user, so read_transcript and stored results stay
// the user's own.
func consoleConversation(userID string) string { return consolePrefix + userID }

// consolePrefix begins every tool console conversation id. The console
// records turns and results under it without a conversation record, so
// the CLI, which may name any id, refuses ids with this prefix.
const consolePrefix = "console-"
