package netguard

import (
	"context"
	"net/netip"
	"testing"
)

// BenchmarkDialCheck measures the work done before every connect: host
// normalisation, look-up (stubbed) and the policy on each answer.
func BenchmarkDialCheck(b *testing.B) {
	res := newStub(publicAnswers)
	res.add("imds.example", "169.254.169.254")
	c, _ := testClient(b, Config{}, res, nil)
	ctx := context.Background()
	for _, bc := range []struct {
		name, addr string
		ok         bool
	}{
		{"public name", "example.com:443", true},
		{"public v4 literal", "8.8.8.8:443", true},
		{"public v6 literal", "[2606:4700:4700::1111]:443", true},
		{"blocked hex literal", "0x7f000001:80", false},
		{"blocked name", "imds.example:80", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_, err := c.resolveChecked(ctx, "tcp", bc.addr)
				if (err == nil) != bc.ok {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPolicy is the address decision alone (what the Control hook adds).
func BenchmarkPolicy(b *testing.B) {
	p := newPolicy(Public, nil, nil)
	ips := []netip.Addr{
		netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.1"),
		netip.MustParseAddr("2606:4700:4700::1111"), netip.MustParseAddr("64:ff9b::a9fe:a9fe"),
	}
	for b.Loop() {
		for _, ip := range ips {
			_ = p.refusal(ip)
		}
	}
}
