package netns

import (
	"strconv"
	"testing"
)

// TestNames: every name a network uses carries its tag, which names the
// process that made it, and interface names fit IFNAMSIZ for the largest
// process id and host index.
func TestNames(t *testing.T) {
	tag, err := newTag()
	if err != nil {
		t.Fatal(err)
	}
	// The largest pid Linux allows (PID_MAX_LIMIT, 2^22) with a suffix
	// that holds the separator's neighbours in base 36.
	big := strconv.FormatInt(1<<22, 36) + "-h0x"
	for _, tg := range []string{tag, big, "1-abc"} {
		names := []string{bridgeName(tg), nsName(tg, 0), nsName(tg, MaxHosts-1), vethName(tg, 0), vethName(tg, MaxHosts-1)}
		for _, n := range names {
			got, ok := nameTag(n)
			if !ok || got != tg {
				t.Errorf("nameTag(%q) = %q, %v; want %q", n, got, ok, tg)
			}
		}
		for _, n := range []string{bridgeName(tg), vethName(tg, MaxHosts-1)} {
			if len(n) > maxIfName {
				t.Errorf("interface name %q is %d bytes, over %d", n, len(n), maxIfName)
			}
		}
	}
	if pid, ok := tagOwner(big); !ok || pid != 1<<22 {
		t.Errorf("tagOwner(%q) = %d, %v", big, pid, ok)
	}
	for _, n := range []string{"eth0", "wnb", "wnbabc", "wnn-abch0", "wnv12-a", "docker0"} {
		if tg, ok := nameTag(n); ok {
			if _, owned := tagOwner(tg); owned {
				t.Errorf("%q read as a name of process-owned tag %q", n, tg)
			}
		}
	}
}
