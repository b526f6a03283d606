package discordtest

import (
	"errors"
	"strconv"
	"testing"
)

// TestComputePermissions checks the computation against the algorithm of
// Discord's permissions topic, case by case.
func TestComputePermissions(t *testing.T) {
	const (
		guild = "100"
		user  = "200"
		roleA = "301"
		roleB = "302"
		other = "999"
	)
	view := PermViewChannel
	base := map[string]uint64{guild: view | PermSendMessages, roleA: PermAddReactions, roleB: PermManageMessages}
	tests := []struct {
		name string
		in   PermissionInput
		want uint64
	}{
		{
			name: "everyone only",
			in:   PermissionInput{GuildID: guild, UserID: user, Roles: base},
			want: view | PermSendMessages,
		},
		{
			name: "member roles add to everyone",
			in:   PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleA, roleB}, Roles: base},
			want: view | PermSendMessages | PermAddReactions | PermManageMessages,
		},
		{
			name: "owner holds everything despite denies",
			in: PermissionInput{GuildID: guild, OwnerID: user, UserID: user, Roles: map[string]uint64{},
				Overwrites: []Overwrite{{ID: user, Type: OverwriteMember, Deny: PermAll}}},
			want: PermAll,
		},
		{
			name: "administrator role ignores overwrites",
			in: PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleA},
				Roles:      map[string]uint64{guild: 0, roleA: PermAdministrator},
				Overwrites: []Overwrite{{ID: guild, Type: OverwriteRole, Deny: PermAll}}},
			want: PermAll,
		},
		{
			name: "administrator on everyone grants all",
			in:   PermissionInput{GuildID: guild, UserID: user, Roles: map[string]uint64{guild: PermAdministrator}},
			want: PermAll,
		},
		{
			name: "administrator in an overwrite allow grants nothing extra",
			in: PermissionInput{GuildID: guild, UserID: user, Roles: base,
				Overwrites: []Overwrite{{ID: user, Type: OverwriteMember, Allow: PermAdministrator}}},
			want: view | PermSendMessages | PermAdministrator,
		},
		{
			name: "everyone overwrite denies then allows",
			in: PermissionInput{GuildID: guild, UserID: user, Roles: base,
				Overwrites: []Overwrite{{ID: guild, Type: OverwriteRole, Deny: PermSendMessages, Allow: PermAddReactions}}},
			want: view | PermAddReactions,
		},
		{
			name: "role allow beats role deny of another role",
			in: PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleA, roleB}, Roles: map[string]uint64{guild: view},
				Overwrites: []Overwrite{
					{ID: roleA, Type: OverwriteRole, Deny: PermSendMessages},
					{ID: roleB, Type: OverwriteRole, Allow: PermSendMessages},
				}},
			want: view | PermSendMessages,
		},
		{
			name: "role overwrite beats everyone overwrite",
			in: PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleA}, Roles: map[string]uint64{guild: view},
				Overwrites: []Overwrite{
					{ID: guild, Type: OverwriteRole, Deny: PermManageMessages},
					{ID: roleA, Type: OverwriteRole, Allow: PermManageMessages},
				}},
			want: view | PermManageMessages,
		},
		{
			name: "member overwrite beats role overwrite",
			in: PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleA}, Roles: map[string]uint64{guild: view | PermSendMessages},
				Overwrites: []Overwrite{
					{ID: roleA, Type: OverwriteRole, Allow: PermManageMessages},
					{ID: user, Type: OverwriteMember, Deny: PermManageMessages | PermSendMessages},
				}},
			want: view,
		},
		{
			name: "overwrites of roles the member lacks do nothing",
			in: PermissionInput{GuildID: guild, UserID: user, Roles: base,
				Overwrites: []Overwrite{{ID: roleA, Type: OverwriteRole, Deny: PermAll}, {ID: other, Type: OverwriteMember, Deny: PermAll}}},
			want: view | PermSendMessages,
		},
		{
			name: "a member overwrite with a role's id is not a role overwrite",
			in: PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleA}, Roles: base,
				Overwrites: []Overwrite{{ID: roleA, Type: OverwriteMember, Deny: PermSendMessages}}},
			want: view | PermSendMessages | PermAddReactions,
		},
		{
			name: "no view channel denies everything",
			in: PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{roleB}, Roles: base,
				Overwrites: []Overwrite{{ID: guild, Type: OverwriteRole, Deny: view}}},
			want: 0,
		},
		{
			name: "no send messages denies the send group",
			in: PermissionInput{GuildID: guild, UserID: user,
				Roles: map[string]uint64{guild: view | PermEmbedLinks | PermAttachFiles | PermMentionEveryone | PermSendTTSMessages | PermAddReactions}},
			want: view | PermAddReactions,
		},
		{
			name: "in a thread the send group stands without send messages",
			in: PermissionInput{GuildID: guild, UserID: user, Thread: true,
				Roles: map[string]uint64{guild: view | PermEmbedLinks | PermSendMessagesInThreads}},
			want: view | PermEmbedLinks | PermSendMessagesInThreads,
		},
		{
			name: "unknown role grants nothing",
			in:   PermissionInput{GuildID: guild, UserID: user, MemberRoles: []string{"404"}, Roles: base},
			want: view | PermSendMessages,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ComputePermissions(tt.in); got != tt.want {
				t.Errorf("ComputePermissions = %#x, want %#x", got, tt.want)
			}
		})
	}
}

func TestParsePermissions(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr bool
	}{
		{in: "0", want: 0},
		{in: "8", want: PermAdministrator},
		{in: "4503599627370495", want: PermAll},
		{in: "18446744073709551615", want: ^uint64(0)},
		{in: "18446744073709551616", wantErr: true},
		{in: "", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "+8", wantErr: true},
		{in: "08", wantErr: true},
		{in: " 8", wantErr: true},
		{in: "0x8", wantErr: true},
		{in: "1e3", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParsePermissions(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParsePermissions(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, errNotDecimal) {
			t.Errorf("ParsePermissions(%q) error %v does not wrap errNotDecimal", tt.in, err)
		}
	}
}

func TestSnowflakeTime(t *testing.T) {
	// Discord's documented example: 175928847299117063 was made at
	// 2016-04-30 11:18:25.796 UTC.
	id, err := ParseSnowflake("175928847299117063")
	if err != nil {
		t.Fatal(err)
	}
	if got := SnowflakeTime(id).Format("2006-01-02T15:04:05.000Z"); got != "2016-04-30T11:18:25.796Z" {
		t.Errorf("SnowflakeTime = %s, want 2016-04-30T11:18:25.796Z", got)
	}
}

// FuzzParsePermissions: whatever parses formats back to the same string,
// and only plain decimal strings parse.
func FuzzParsePermissions(f *testing.F) {
	for _, s := range []string{"0", "8", "4503599627370495", "18446744073709551615", "18446744073709551616", "-1", "08", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePermissions(s)
		if err != nil {
			if v != 0 {
				t.Fatalf("error %v with value %d", err, v)
			}
			return
		}
		if FormatPermissions(v) != s {
			t.Fatalf("ParsePermissions(%q) = %d, which formats as %q", s, v, FormatPermissions(v))
		}
		if ref, err := strconv.ParseUint(s, 10, 64); err != nil || ref != v {
			t.Fatalf("ParsePermissions(%q) = %d, strconv says %d, %v", s, v, ref, err)
		}
	})
}

// FuzzParseSnowflake: a parsed id round-trips, its time is after Discord's
// epoch, and ids order as their numbers do.
func FuzzParseSnowflake(f *testing.F) {
	for _, s := range []string{"175928847299117063", "0", "1", "99999999999999999999", "abc", "0175"} {
		f.Add(s, "1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		x, errA := ParseSnowflake(a)
		y, errB := ParseSnowflake(b)
		if errA == nil {
			if strconv.FormatUint(x, 10) != a {
				t.Fatalf("ParseSnowflake(%q) = %d does not round-trip", a, x)
			}
			if SnowflakeTime(x).UnixMilli() < discordEpoch {
				t.Fatalf("SnowflakeTime(%d) before the epoch", x)
			}
		}
		if errA == nil && errB == nil && snowflakeLess(a, b) != (x < y) {
			t.Fatalf("snowflakeLess(%q, %q) disagrees with %d < %d", a, b, x, y)
		}
	})
}

// FuzzComputePermissions: the owner and administrators always hold
// PermAll, no result has bits outside what roles and allows granted
// (except PermAll), and without VIEW_CHANNEL the result is 0.
func FuzzComputePermissions(f *testing.F) {
	f.Add(uint64(PermDefaultEveryone), uint64(0), uint64(0), uint64(0), uint64(0), false)
	f.Add(uint64(PermViewChannel), uint64(PermAdministrator), uint64(PermAll), uint64(0), uint64(0), true)
	f.Fuzz(func(t *testing.T, everyone, role, everyoneDeny, roleAllow, memberDeny uint64, thread bool) {
		in := PermissionInput{GuildID: "1", UserID: "2", MemberRoles: []string{"3"},
			Roles: map[string]uint64{"1": everyone, "3": role}, Thread: thread,
			Overwrites: []Overwrite{
				{ID: "1", Type: OverwriteRole, Deny: everyoneDeny},
				{ID: "3", Type: OverwriteRole, Allow: roleAllow},
				{ID: "2", Type: OverwriteMember, Deny: memberDeny},
			}}
		got := ComputePermissions(in)
		if (everyone|role)&PermAdministrator != 0 {
			if got != PermAll {
				t.Fatalf("administrator got %#x", got)
			}
			return
		}
		if got&^(everyone|role|roleAllow) != 0 {
			t.Fatalf("got %#x, bits granted by nothing", got)
		}
		if got&memberDeny != 0 {
			t.Fatalf("got %#x despite member deny %#x", got, memberDeny)
		}
		if got != 0 && got&PermViewChannel == 0 {
			t.Fatalf("got %#x without VIEW_CHANNEL", got)
		}
		in.OwnerID = "2"
		if ComputePermissions(in) != PermAll {
			t.Fatal("owner lacks PermAll")
		}
	})
}
