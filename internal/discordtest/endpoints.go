package discordtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// endpointVars lists every string endpoint variable of discordgo v0.28.1
// in the order its endpoints.go derives them. The function endpoints
// (EndpointChannelMessage, EndpointUserAvatar, ...) build their URLs from
// these at call time, so pointing these points them too. A test compares
// this list with discordgo's source.
func endpointVars() []struct {
	name string
	p    *string
} {
	return []struct {
		name string
		p    *string
	}{
		{"EndpointStatus", &discordgo.EndpointStatus},
		{"EndpointSm", &discordgo.EndpointSm},
		{"EndpointSmActive", &discordgo.EndpointSmActive},
		{"EndpointSmUpcoming", &discordgo.EndpointSmUpcoming},
		{"EndpointDiscord", &discordgo.EndpointDiscord},
		{"EndpointAPI", &discordgo.EndpointAPI},
		{"EndpointGuilds", &discordgo.EndpointGuilds},
		{"EndpointChannels", &discordgo.EndpointChannels},
		{"EndpointUsers", &discordgo.EndpointUsers},
		{"EndpointGateway", &discordgo.EndpointGateway},
		{"EndpointGatewayBot", &discordgo.EndpointGatewayBot},
		{"EndpointWebhooks", &discordgo.EndpointWebhooks},
		{"EndpointStickers", &discordgo.EndpointStickers},
		{"EndpointStageInstances", &discordgo.EndpointStageInstances},
		{"EndpointCDN", &discordgo.EndpointCDN},
		{"EndpointCDNAttachments", &discordgo.EndpointCDNAttachments},
		{"EndpointCDNAvatars", &discordgo.EndpointCDNAvatars},
		{"EndpointCDNIcons", &discordgo.EndpointCDNIcons},
		{"EndpointCDNSplashes", &discordgo.EndpointCDNSplashes},
		{"EndpointCDNChannelIcons", &discordgo.EndpointCDNChannelIcons},
		{"EndpointCDNBanners", &discordgo.EndpointCDNBanners},
		{"EndpointCDNGuilds", &discordgo.EndpointCDNGuilds},
		{"EndpointCDNRoleIcons", &discordgo.EndpointCDNRoleIcons},
		{"EndpointVoice", &discordgo.EndpointVoice},
		{"EndpointVoiceRegions", &discordgo.EndpointVoiceRegions},
		{"EndpointNitroStickersPacks", &discordgo.EndpointNitroStickersPacks},
		{"EndpointGuildCreate", &discordgo.EndpointGuildCreate},
		{"EndpointApplications", &discordgo.EndpointApplications},
		{"EndpointOAuth2", &discordgo.EndpointOAuth2},
		{"EndpointOAuth2Applications", &discordgo.EndpointOAuth2Applications},
		{"EndpointOauth2", &discordgo.EndpointOauth2},
		{"EndpointOauth2Applications", &discordgo.EndpointOauth2Applications},
	}
}

// setEndpoints derives every string endpoint from root (ending in "/")
// with discordgo's own formulas, its quirks included (EndpointVoice and
// EndpointNitroStickersPacks carry a double slash there too). The status
// page and the CDN move under root as well.
func setEndpoints(root string) {
	discordgo.EndpointStatus = root + "status/api/v2/"
	discordgo.EndpointSm = discordgo.EndpointStatus + "scheduled-maintenances/"
	discordgo.EndpointSmActive = discordgo.EndpointSm + "active.json"
	discordgo.EndpointSmUpcoming = discordgo.EndpointSm + "upcoming.json"

	discordgo.EndpointDiscord = root
	api := discordgo.EndpointDiscord + "api/v" + discordgo.APIVersion + "/"
	discordgo.EndpointAPI = api
	discordgo.EndpointGuilds = api + "guilds/"
	discordgo.EndpointChannels = api + "channels/"
	discordgo.EndpointUsers = api + "users/"
	discordgo.EndpointGateway = api + "gateway"
	discordgo.EndpointGatewayBot = discordgo.EndpointGateway + "/bot"
	discordgo.EndpointWebhooks = api + "webhooks/"
	discordgo.EndpointStickers = api + "stickers/"
	discordgo.EndpointStageInstances = api + "stage-instances"

	cdn := root + "cdn/"
	discordgo.EndpointCDN = cdn
	discordgo.EndpointCDNAttachments = cdn + "attachments/"
	discordgo.EndpointCDNAvatars = cdn + "avatars/"
	discordgo.EndpointCDNIcons = cdn + "icons/"
	discordgo.EndpointCDNSplashes = cdn + "splashes/"
	discordgo.EndpointCDNChannelIcons = cdn + "channel-icons/"
	discordgo.EndpointCDNBanners = cdn + "banners/"
	discordgo.EndpointCDNGuilds = cdn + "guilds/"
	discordgo.EndpointCDNRoleIcons = cdn + "role-icons/"

	discordgo.EndpointVoice = api + "/voice/"
	discordgo.EndpointVoiceRegions = discordgo.EndpointVoice + "regions"
	discordgo.EndpointNitroStickersPacks = api + "/sticker-packs"
	discordgo.EndpointGuildCreate = api + "guilds"
	discordgo.EndpointApplications = api + "applications"
	discordgo.EndpointOAuth2 = api + "oauth2/"
	discordgo.EndpointOAuth2Applications = discordgo.EndpointOAuth2 + "applications"
	discordgo.EndpointOauth2 = discordgo.EndpointOAuth2
	discordgo.EndpointOauth2Applications = discordgo.EndpointOAuth2Applications
}

// PointDiscordgo points every discordgo endpoint (REST, gateway lookup,
// CDN, status page) at this fake and restores the previous values in
// t.Cleanup. The endpoints are discordgo's package variables, so this is
// process-wide: tests that call it must not run in parallel with each
// other (nor with anything else using discordgo). It does not touch
// discordgo.APIVersion: v0.28.1 speaks "9", which the fake serves beside
// v10.
func (s *Server) PointDiscordgo(t testing.TB) {
	t.Helper()
	vars := endpointVars()
	saved := make([]string, len(vars))
	for i, v := range vars {
		saved[i] = *v.p
	}
	t.Cleanup(func() {
		for i, v := range vars {
			*v.p = saved[i]
		}
	})
	setEndpoints(s.URL() + "/")
}

// NewSession returns a discordgo session for the bot (token "Bot …"),
// not yet opened. Call PointDiscordgo first. Its HTTP client and
// websocket dialer refuse every address but the fake's, so a URL that
// discordgo builds past the endpoint variables fails the call instead of
// leaving the machine.
func (s *Server) NewSession(t testing.TB) *discordgo.Session {
	t.Helper()
	sess, err := discordgo.New(s.AuthToken())
	if err != nil {
		t.Fatalf("discordtest: new session: %v", err)
	}
	host := strings.TrimPrefix(s.URL(), "http://")
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != host {
			return nil, fmt.Errorf("discordtest: refused to dial %s: only the fake at %s is reachable", addr, host)
		}
		return dialer.DialContext(ctx, network, addr)
	}
	tr := &http.Transport{DialContext: dial}
	t.Cleanup(tr.CloseIdleConnections)
	sess.Client = &http.Client{Timeout: 20 * time.Second, Transport: tr}
	sess.Dialer = &websocket.Dialer{NetDialContext: dial, HandshakeTimeout: 10 * time.Second}
	return sess
}
