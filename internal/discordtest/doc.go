// Package discordtest is a local fake of Discord for tests: its REST API
// (API v10 JSON, served under /api/v10 and under /api/v9, the version
// discordgo v0.28.1 asks for), its gateway websocket (HELLO, IDENTIFY,
// READY, GUILD_CREATE, HEARTBEAT/ACK, RESUME with replay, sequence
// numbers, Discord's close codes) and its CDN's avatars, on an httptest
// server bound to 127.0.0.1. It never reaches discord.com: PointDiscordgo
// moves every discordgo endpoint variable to the fake, and the session
// NewSession makes refuses to dial any other address.
//
// The world is in memory (REST reads it as Discord serves it: a guild
// with its roles, its channels, its active threads, its stickers, a
// member): guilds with roles and stickers, text channels
// and threads with permission overwrites, members, messages (replies,
// stickers, pins, reactions, nonces), application commands and
// interactions. Setup methods build it; inspection methods (Messages,
// Pins, Reactions, Threads, Commands, InteractionResponses) read it for
// assertions; SendMessage, Interact, Disconnect and InvalidateSessions
// drive the gateway. Every method is safe for concurrent use; a setup
// mistake (an unknown guild, a duplicate id) panics. As on Discord, the
// bot's own messages, interaction responses included, are dispatched back
// to it as MESSAGE_CREATE.
//
// What it checks as Discord does: the bot token, the bot's permissions in
// each channel (ComputePermissions: @everyone, member roles,
// ADMINISTRATOR, then the channel's @everyone, role and member overwrites;
// threads use their parent's), 403 Missing Permissions (50013) for an
// action that needs a permission the bot lacks, 404 with Discord's codes
// for unknown ids, enforce_nonce, the MESSAGE_CONTENT and privileged
// intents, and the documented limits (2000-character content, 25-character
// nonce, 3 stickers, 20 reactions, 50 pins, 100 commands, 1 MiB bodies).
//
// What it does not fake: voice, presences, DMs, attachments and embeds
// (accepted, not stored), components, webhooks other than interaction
// followups, guild and channel management, audit logs, zlib or
// zlib-stream compression (frames are plain JSON text, which discordgo
// reads), ETF encoding, Discord's real rate limits (RateLimit configures a
// 429 on one route), heartbeat timeouts on the server side, and the
// interaction token's 15-minute life.
package discordtest
