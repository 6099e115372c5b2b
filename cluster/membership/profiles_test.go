package membership

import (
	"errors"
	"testing"
)

func TestProfileByName(t *testing.T) {
	for _, p := range []Profile{Fast, Relaxed, LAN} {
		got, err := ProfileByName(p.Name)
		if err != nil || got != p {
			t.Errorf("ProfileByName(%q) = %v, %v", p.Name, got, err)
		}
	}
	for name, want := range map[string]Profile{"fast": Fast, "relaxed": Relaxed, "lan": LAN} {
		if got, _ := ProfileByName(name); got != want {
			t.Errorf("ProfileByName(%q) = %v", name, got)
		}
	}
	if _, err := ProfileByName("lan-default"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("unknown profile: %v", err)
	}
}

// TestProfileConfig checks that Config carries every timing of the profile.
func TestProfileConfig(t *testing.T) {
	c := Fast.Config("n", "127.0.0.1", 7000, nil)
	if c.Name != "n" || c.BindAddr != "127.0.0.1" || c.BindPort != 7000 || c.AdvertisePort != 7000 ||
		c.ProbeInterval != Fast.ProbeInterval || c.ProbeTimeout != Fast.ProbeTimeout ||
		c.SuspicionMult != Fast.SuspicionMult || c.SuspicionMaxTimeoutMult != Fast.SuspicionMaxTimeoutMult ||
		c.GossipInterval != Fast.GossipInterval || c.GossipNodes != Fast.GossipNodes ||
		c.IndirectChecks != Fast.IndirectChecks || c.RetransmitMult != Fast.RetransmitMult ||
		c.AwarenessMaxMultiplier != Fast.AwarenessMaxMultiplier || c.PushPullInterval != Fast.PushPullInterval ||
		c.TCPTimeout != Fast.TCPTimeout || c.Logger == nil || c.LogOutput != nil {
		t.Fatalf("Config: %+v", c)
	}
}
